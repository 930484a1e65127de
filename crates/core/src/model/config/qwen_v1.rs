//! Qwen (the first generation: `model_type` "qwen", `QWenLMHeadModel`, remote code; Qwen-1.8B
//! … Qwen-72B), as its `modeling_qwen.py` builds it, with P = `kv_channels` × heads:
//!
//! - per block: `ln_1` and `ln_2` RMSNorms `2h`; `attn.c_attn`, q, k and v fused, `h·3P` with a
//!   bias `3P` (always); `attn.c_proj` `h·P` (a bias `P` only when `no_bias` is false);
//! - the MLP: `intermediate_size` I counts both halves of the gate, so `w1` and `w2` are
//!   `h·(I/2)` each and `c_proj` `(I/2)·h` (biases `2·(I/2) + h` only when `no_bias` is false);
//! - `ln_f` `h`; `wte` `V·h` and `lm_head` `V·h` (QWenConfig ties nothing by default).
//!
//! Qwen-VL's configs have the same type with a `visual` part: that tower is not counted (a
//! warning says so).
//!
//! Multi-head attention: every head caches its own K and V of width `kv_channels`, so the KV
//! cache per token is `2 × layers × heads × kv_channels` elements (`2 × layers × h` when
//! `kv_channels` = h / heads, as in the Qwen-7B and Qwen-72B configs).

use super::common::{read_dims, read_tie, Dims};
use super::kit::{add_dense_ffn, finish_parts, full_attention, Acc, Comp, Parts};
use super::reader::Reader;
use crate::base::checked::mul;
use crate::base::error::{CalcError, Phrase};
use crate::model::desc::Layer;
use serde_json::Value;

/// QWenConfig's `kv_channels` when the config omits it (`configuration_qwen.py`).
const KV_CHANNELS_DEFAULT: u64 = 128;

/// Qwen (v1).
pub(super) fn qwen_v1(r: &mut Reader) -> Result<Parts, CalcError> {
    let Dims {
        h,
        n_layers,
        heads,
        vocab,
    } = read_dims(r, "qwen")?;
    // The published configs state kv_channels = h / heads; QWenConfig's own default is 128.
    let hd = r.or(
        ("head_dim", "kv_channels"),
        KV_CHANNELS_DEFAULT,
        "ldg_qwen_v1_kv_channels_default",
    )?;
    let inter = r.req("intermediate_size", "why_size_mlp")?;
    let half = inter / 2;
    r.derived("mlp_width", half, "ldg_qwen_v1_mlp_halves");
    let no_bias = r.flag("no_bias", true, "ldg_qwen_v1_no_bias_default")?;
    let bias = !no_bias;
    r.derived(
        "attention_bias",
        if bias {
            "c_attn: ✓; c_proj: ✓"
        } else {
            "c_attn: ✓; c_proj: ✗"
        },
        "ldg_qwen_v1_c_attn_bias",
    );
    let tie = read_tie(r, false, "qwen")?;
    if r.root().get("visual").is_some_and(Value::is_object) {
        r.warnings.push(Phrase::tr("wrn_qwen_visual_not_counted"));
    }
    let w = "ovf_attention_params";
    let p = mul(w, &[heads, hd])?;
    let mut acc = Acc::default();
    let mut layers = Vec::new();
    for _ in 0..n_layers {
        acc.norms(2, h)?;
        acc.lin(Comp::Attn, mul(w, &[h, 3, p])?)?;
        acc.add(Comp::Attn, mul(w, &[3, p])?)?;
        acc.lin(Comp::Attn, mul(w, &[h, p])?)?;
        if bias {
            acc.add(Comp::Attn, p)?;
        }
        layers.push(Layer {
            mixer: full_attention(heads, heads, hd),
            ffn: add_dense_ffn(&mut acc, h, half, true, bias)?,
        });
    }
    finish_parts(r, layers, acc, (h, vocab, tie), 1)
}

#[cfg(test)]
mod tests {
    use super::super::parse_model_text;

    #[test]
    fn a_small_qwen_by_hand() {
        // h 64, 2 layers, 4 heads, kv_channels 16 (P = 64), I 256 (halves of 128), V 100:
        // per layer norms 2·64 + c_attn 64·192 + 192 + c_proj 64·64 + MLP 3·64·128
        // = 128 + 12,288 + 192 + 4,096 + 24,576 = 41,280; ×2 = 82,560;
        // + ln_f 64 + wte and lm_head 2·100·64 = 12,800 → 95,424.
        let cfg = r#"{"model_type":"qwen","architectures":["QWenLMHeadModel"],
            "hidden_size":64,"num_hidden_layers":2,"num_attention_heads":4,"kv_channels":16,
            "intermediate_size":256,"vocab_size":100,"seq_length":2048}"#;
        let m = parse_model_text(cfg).ok();
        assert_eq!(m.as_ref().map(|m| m.params.total), Some(95_424));
        // With no_bias false: c_proj's bias 64, w1 and w2's 2·128, the MLP c_proj's 64.
        let biased = cfg.replace("\"seq_length\"", "\"no_bias\":false,\"seq_length\"");
        let m = parse_model_text(&biased).map(|m| m.params.total).ok();
        assert_eq!(m, Some(95_424 + 2 * (64 + 2 * 128 + 64)));
        // Qwen-VL: the `visual` tower is named as left out.
        let vl = cfg.replace(
            "\"seq_length\"",
            "\"visual\":{\"width\":1664},\"seq_length\"",
        );
        let m = parse_model_text(&vl).ok();
        assert_eq!(m.as_ref().map(|m| m.params.total), Some(95_424));
        assert!(m.is_some_and(|m| m.warnings.len() == 1));
    }
}
