//! Bamba (`bamba`): Mamba-2 layers with attention at listed indices, a gated MLP in every layer.

use super::common::{read_core, read_tie};
use super::granite_hybrid::read_granite_mamba;
use super::kit::{add_dense_ffn, finish_parts, Acc, Parts};
use super::mamba2::mamba2;
use super::reader::Reader;
use super::ssm::{attention, layer_indices};
use crate::base::error::CalcError;
use crate::model::desc::Layer;

/// Bamba (`bamba`): per layer two RMSNorms (input, pre-FF), a Mamba-2 mixer or, at
/// `attn_layer_indices` (none: every layer is Mamba, as `BambaConfig` reads it), GQA
/// attention without biases; a gated MLP `3·h·I` in every layer; final norm; embeddings and
/// the head unless tied.
pub(super) fn bamba(r: &mut Reader) -> Result<Parts, CalcError> {
    let c = read_core(r, "bamba")?;
    let h = c.h;
    let tie = read_tie(r, false, "bamba")?;
    let attn = layer_indices(r, "attn_layer_indices", c.n_layers)?;
    r.derived("attention_layers", attn.len(), "ldg_bamba_attention_layers");
    let m = read_granite_mamba(r, h, tie)?;
    let inter = r.req("intermediate_size", "why_size_mlp_blocks")?;
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for i in 0..c.n_layers {
        acc.norms(2, h)?;
        let mixer = if attn.contains(&i) {
            attention(&mut acc, h, (c.heads, c.kv, c.hd), false)?
        } else {
            mamba2(&mut acc, &m)?
        };
        let ffn = add_dense_ffn(&mut acc, h, inter, true, false)?;
        layers.push(Layer { mixer, ffn });
    }
    finish_parts(r, layers, acc, (h, c.vocab, tie), 1)
}
