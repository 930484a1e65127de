//! Qwen3.5 (`qwen3_5_text`, dense) and Qwen3.5-MoE (`qwen3_5_moe_text`): Qwen3-Next's layers.

use super::common::read_core;
use super::kit::Parts;
use super::qwen3_next::{gated_delta_hybrid, read_shared_moe, MtpKey, NextFfn};
use super::reader::Reader;
use super::ssm::read_ssm_state_dtype;
use crate::base::error::{CalcError, Phrase};

/// Qwen3.5 (`qwen3_5_text`, dense: a gated MLP of `intermediate_size` in every layer) and
/// Qwen3.5-MoE (`qwen3_5_moe_text`: Qwen3-Next's MoE in every layer): Qwen3-Next's layers
/// (transformers 5.24.0 builds `Qwen3_5GatedDeltaNet` with in_proj_qkv, in_proj_z, in_proj_b
/// and in_proj_a, the same sizes as Qwen3-Next's in_proj_qkvz and in_proj_ba). The MTP modules
/// are `mtp_num_hidden_layers` (one when absent, as the published checkpoints store), with the
/// same feed-forward as the main layers. The vision tower is counted apart
/// ([`super::vision::qwen_vl`]).
pub(super) fn qwen3_5(r: &mut Reader, moe: bool) -> Result<Parts, CalcError> {
    let fam = if moe { "qwen3_5_moe" } else { "qwen3_5" };
    let c = read_core(r, fam)?;
    let ffn = if moe {
        NextFfn::Moe(read_shared_moe(
            r,
            ("moe_intermediate_size", "shared_expert_intermediate_size"),
        )?)
    } else {
        NextFfn::Dense(r.req("intermediate_size", "why_size_mlp")?)
    };
    if r.flag(
        "mtp_use_dedicated_embeddings",
        false,
        "ldg_mtp_shares_embeddings",
    )? {
        r.warnings.push(Phrase::tr("wrn_mtp_dedicated_embeddings"));
    }
    let mtp = MtpKey {
        key: "mtp_num_hidden_layers",
        why_one: "ldg_qwen3_5_mtp_default",
    };
    let mut parts = gated_delta_hybrid(r, fam, &c, &ffn, &mtp)?;
    parts.ssm_state_dtype = read_ssm_state_dtype(r, "mamba_ssm_dtype");
    Ok(parts)
}
