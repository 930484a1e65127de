//! The model's operator inventory for one step: every operator of every layer, per GPU under
//! tensor parallelism ([`layer_ops`], [`model_ops`]), after the workload's checks, and their sum
//! ([`total`]); a performance model times each as
//! `max(FLOPs / (peak × eff), bytes / (bandwidth × eff))`.

use super::ffn::ffn_ops;
use super::mixer::mixer_ops;
use super::op::{linear, OpCost, Pass, Phase, Precisions, Step};
use super::ridge::intensity;
use crate::base::checked::bits_to_bytes_real;
use crate::base::error::{CalcError, Phrase};
use crate::base::units::Bytes;
use crate::model::{Ffn, ModelDesc};

/// The operators of decoder layer `index` for one step, per GPU at tensor-parallel degree
/// `tp`. Operators: `op_norm` (2 RMS/LayerNorms, ~4 FLOP per element), `op_attn_q/k/v/o`
/// (GQA/MQA shapes; MLA `op_attn_q_a/q_b/kv_a/kv_b`), `op_attn_score` (QKᵀ + softmax,
/// reading K) and `op_attn_av` (weighted sum, reading V) with the flash-attention model (the
/// score matrix stays on chip; each cached key is read once per step; sliding layers capped
/// at the window), `op_mlp_gate_up`/`op_mlp_up`/`op_mlp_down`, or for MoE `op_moe_router`,
/// `op_moe_experts` (FLOPs of the `top_k` chosen experts; weight bytes of the expected
/// distinct experts touched,
/// [`expected_distinct_experts`](super::expected_distinct_experts)) and `op_moe_shared`; for SSM
/// layers `op_ssm_in`, `op_ssm_scan` (~9 FLOP per inner channel per state element per token;
/// decode reads and writes the recurrent state) and `op_ssm_out`. Approximations: MLA decode
/// uses the absorbed form (scores over the `kv_lora_rank + qk_rope_head_dim` latent, read once
/// for all heads; `kv_b` counted as a linear on the new tokens); SSM `x_proj`/`dt_proj` and
/// the convolution are omitted (a few % of the mixer).
pub fn layer_ops(
    model: &ModelDesc,
    index: usize,
    w: &Pass,
    p: &Precisions,
    tp: u64,
) -> Result<Vec<OpCost>, CalcError> {
    check_workload(w, tp)?;
    let Some(layer) = model.layers.get(index) else {
        return Err(CalcError::range_error(
            Phrase::verbatim("layer"),
            index,
            Phrase::tr("rng_below").val("n", model.layers.len()),
        ));
    };
    let ph = w.phase;
    let b = w.batch as f64;
    let s_new = if ph == Phase::Prefill {
        w.seq as f64
    } else {
        1.0
    };
    let t = b * s_new;
    let h = model.hidden_size;
    let hf = h as f64;
    let act = p.act.bits() as f64;
    let kvb = p.kv.bits() as f64;
    let lb = p.linear_bits;
    let mut ops = Vec::new();

    let norms = if matches!(layer.ffn, Ffn::None) {
        1.0
    } else {
        2.0
    };
    ops.push(OpCost::new(
        "op_norm",
        ph,
        norms * 4.0 * t * h as f64,
        bits_to_bytes_real(norms * h as f64, p.base_bits),
        bits_to_bytes_real(norms * 2.0 * t * h as f64, act),
        Bytes::ZERO,
    ));

    let st = Step {
        w,
        ph,
        b,
        t,
        hf,
        act,
        kvb,
        lb,
    };
    ops.extend(mixer_ops(&st, &layer.mixer, tp)?);
    ops.extend(ffn_ops(&st, &layer.ffn, p, tp));
    Ok(ops)
}

fn check_workload(w: &Pass, tp: u64) -> Result<(), CalcError> {
    let bad = |field: &str, v: u64| {
        CalcError::range_error(
            Phrase::verbatim(field),
            v,
            Phrase::tr("rng_whole_at_least_1"),
        )
    };
    if w.batch == 0 {
        return Err(bad("batch", 0));
    }
    if w.seq == 0 {
        return Err(bad("seq", 0));
    }
    if tp == 0 {
        return Err(bad("tp", 0));
    }
    Ok(())
}

/// The operators of the whole model for one step, per GPU: every layer's operators
/// ([`layer_ops`]), identical ones of identical layers summed (their `layers` field counts
/// them, so `max(FLOPs/peak, bytes/bw)` of the sum equals the sum of the per-layer maxima),
/// then the final norm and the lm_head once (`op_final_norm`, `op_lm_head`: logits for the
/// last position of each sequence only in prefill, as vLLM computes them; vocabulary ÷ TP).
/// The embedding lookup (a gather of `B·S·h` values) is left out.
pub fn model_ops(
    model: &ModelDesc,
    w: &Pass,
    p: &Precisions,
    tp: u64,
) -> Result<Vec<OpCost>, CalcError> {
    check_workload(w, tp)?;
    // (one layer's cost, running sum) per distinct operator.
    let mut acc: Vec<(OpCost, OpCost)> = Vec::new();
    for i in 0..model.layers.len() {
        for op in layer_ops(model, i, w, p, tp)? {
            match acc.iter_mut().find(|(one, _)| {
                one.name_key == op.name_key
                    && one.window == op.window
                    && one.flops.0.to_bits() == op.flops.0.to_bits()
                    && one.bytes == op.bytes
            }) {
                Some((_, o)) => {
                    o.flops = o.flops + op.flops;
                    o.bytes = o.bytes + op.bytes;
                    o.weight_bytes = o.weight_bytes + op.weight_bytes;
                    o.kv_bytes = o.kv_bytes + op.kv_bytes;
                    o.layers += 1;
                    o.intensity = intensity(o.flops, o.bytes);
                }
                None => acc.push((op.clone(), op)),
            }
        }
    }
    let mut out: Vec<OpCost> = acc.into_iter().map(|(_, sum)| sum).collect();
    let ph = w.phase;
    let t_out = w.batch as f64;
    let h = model.hidden_size;
    let act = p.act.bits() as f64;
    out.push(OpCost::new(
        "op_final_norm",
        ph,
        4.0 * t_out * h as f64,
        bits_to_bytes_real(h as f64, p.base_bits),
        bits_to_bytes_real(2.0 * t_out * h as f64, act),
        Bytes::ZERO,
    ));
    if model.vocab_size > 0 {
        out.push(linear(
            "op_lm_head",
            ph,
            t_out,
            h as f64,
            model.vocab_size.div_ceil(tp) as f64,
            p.base_bits,
            act,
        ));
    }
    Ok(out)
}

/// The sum of a list of operators as one point (`op_prefill_total` / `op_decode_total`).
pub fn total(ops: &[OpCost], phase: Phase) -> OpCost {
    let mut t = OpCost::new(
        match phase {
            Phase::Prefill => "op_prefill_total",
            Phase::Decode => "op_decode_total",
        },
        phase,
        0.0,
        Bytes::ZERO,
        Bytes::ZERO,
        Bytes::ZERO,
    );
    for o in ops {
        t.flops = t.flops + o.flops;
        t.bytes = t.bytes + o.bytes;
        t.weight_bytes = t.weight_bytes + o.weight_bytes;
        t.kv_bytes = t.kv_bytes + o.kv_bytes;
    }
    t.layers = 0;
    t.intensity = intensity(t.flops, t.bytes);
    t
}

#[cfg(test)]
mod tests {
    use super::super::mixer::attention_pairs;
    use super::*;
    use crate::base::dtype::Dtype;

    #[test]
    fn pairs_causal_and_window() {
        let w = pass(Phase::Prefill, 1, 4);
        assert_eq!(attention_pairs(&w, None), 10.0); // 1+2+3+4
        assert_eq!(attention_pairs(&w, Some(2)), 7.0); // 1+2+2+2
        let d = pass(Phase::Decode, 1, 100);
        assert_eq!(attention_pairs(&d, Some(16)), 16.0);
    }

    fn parse(text: &str) -> ModelDesc {
        crate::model::config::parse_model_text(text).expect("fixture parses")
    }

    #[test]
    fn moe_decode_reads_only_active_experts() {
        // Qwen3-30B-A3B: 128 experts, top-8, expert intermediate 768, hidden 2048, gated.
        // Batch 1 decode: exactly 8 experts × 3 × 2,048 × 768 × 2 B per layer.
        let m = parse(include_str!(
            "../../../../../tests/fixtures/Qwen__Qwen3-30B-A3B.json"
        ));
        let e = bf16_op(&m, &pass(Phase::Decode, 1, 1000), 1, "op_moe_experts");
        assert_eq!(e.weight_bytes, Bytes(8 * 3 * 2048 * 768 * 2));
        // At batch 64 the expected distinct experts are 128 × (1 − (120/128)^64) ≈ 126.8.
        let e = bf16_op(&m, &pass(Phase::Decode, 64, 1000), 1, "op_moe_experts");
        let want = 128.0 * (1.0 - (120.0f64 / 128.0).powi(64)) * 3.0 * 2048.0 * 768.0 * 2.0;
        assert!((e.weight_bytes.0 as f64 - want).abs() <= 1.0);
    }

    #[test]
    fn mla_decode_reads_the_latent_once() {
        // DeepSeek-V2-Lite: kv_lora_rank 512 + rope 64 = 576 values per token per layer.
        // Decode, batch 2, context 1,000, bf16: 2 × 1,000 × 576 × 2 B read + 2 new tokens
        // × 576 × 2 B written.
        let m = parse(include_str!(
            "../../../../../tests/fixtures/deepseek-ai__DeepSeek-Coder-V2-Lite-Base.json"
        ));
        let ops = layer_ops(&m, 0, &pass(Phase::Decode, 2, 1000), &bf16(), 1).expect("ops");
        let kv: u64 = ops.iter().map(|o| o.kv_bytes.0).sum();
        assert_eq!(kv, 2 * 1000 * 576 * 2 + 2 * 576 * 2);
    }

    #[test]
    fn mla_down_projection_is_replicated_under_tp() {
        // DeepSeek-V2-Lite: hidden 2048, kv_lora_rank 512 + rope 64. The latent
        // down-projection kv_a_proj_with_mqa is a ReplicatedLinear in vLLM: every rank reads
        // all 2048 × 576 × 2 B of it at any TP; the up-projection kv_b (16 heads × (128 + 128)
        // out of 512) is column-parallel and halves with each doubling.
        let m = parse(include_str!(
            "../../../../../tests/fixtures/deepseek-ai__DeepSeek-Coder-V2-Lite-Base.json"
        ));
        let w = pass(Phase::Decode, 1, 100);
        let wb = |tp: u64, key: &str| bf16_op(&m, &w, tp, key).weight_bytes.0;
        for tp in [1, 2, 4, 8] {
            assert_eq!(wb(tp, "op_attn_kv_a"), 2048 * 576 * 2, "TP {tp}");
            assert_eq!(wb(tp, "op_attn_kv_b"), 512 * (16 / tp) * 256 * 2, "TP {tp}");
        }
    }

    #[test]
    fn sliding_window_caps_decode_reads() {
        // gemma-2-9b alternates sliding (4,096) and full layers; at context 8,192 a sliding
        // layer reads half the keys of a full one.
        let m = parse(include_str!(
            "../../../../../tests/fixtures/google__gemma-2-9b-it.json"
        ));
        let ops = model_ops(&m, &pass(Phase::Decode, 1, 8192), &bf16(), 1).expect("ops");
        let score = |win: Option<u64>| {
            ops.iter()
                .find(|o| o.name_key == "op_attn_score" && o.window == win)
                .map(|o| o.kv_bytes.0 / o.layers)
                .expect("score op")
        };
        let (full, slid) = (score(None), score(Some(4096)));
        // Each reads its keys plus writes one new key: (keys + 1) × H_kv × d × 2 B.
        assert_eq!(full * 4097, slid * 8193);
    }

    #[test]
    fn tp_divides_per_gpu_work() {
        // TP 2 halves the projection and MLP FLOPs per GPU.
        let m = parse(include_str!(
            "../../../../../tests/fixtures/meta-llama__Meta-Llama-3.1-8B.json"
        ));
        let w = pass(Phase::Prefill, 1, 512);
        let f = |tp: u64, key: &str| bf16_op(&m, &w, tp, key).flops.0;
        for key in [
            "op_attn_q",
            "op_attn_k",
            "op_mlp_gate_up",
            "op_mlp_down",
            "op_attn_score",
        ] {
            assert!((f(1, key) / f(2, key) - 2.0).abs() < 1e-12, "{key}");
        }
        assert!(layer_ops(&m, 0, &w, &bf16(), 3).is_err());
    }

    /// A pass of `batch` sequences of `seq` tokens.
    fn pass(phase: Phase, batch: u64, seq: u64) -> Pass {
        Pass { phase, batch, seq }
    }

    /// Weights, KV cache and activations in bf16.
    fn bf16() -> Precisions {
        Precisions::uniform(Dtype::Bf16, Dtype::Bf16, Dtype::Bf16)
    }

    /// The operator `key` of layer 0 at TP `tp`, everything in bf16.
    #[track_caller]
    fn bf16_op(m: &ModelDesc, w: &Pass, tp: u64, key: &str) -> OpCost {
        layer_ops(m, 0, w, &bf16(), tp)
            .expect("ops")
            .into_iter()
            .find(|o| o.name_key == key)
            .expect("op")
    }

    #[test]
    fn precisions_from_gpt_oss_format() {
        // gpt-oss-20b: MXFP4 experts (4 bits + one 8-bit scale per 32 = 4.25 bits), the rest
        // bf16.
        let m = parse(include_str!(
            "../../../../../tests/fixtures/openai__gpt-oss-20b.json"
        ));
        let p = Precisions::from_format(&m.weights, Dtype::Bf16, Dtype::Bf16);
        assert_eq!(p.expert_bits, 4.25);
        assert_eq!(p.linear_bits, 16.0);
        assert_eq!(p.base_bits, 16.0);
        let plain = Precisions::from_format(
            &parse(include_str!(
                "../../../../../tests/fixtures/meta-llama__Llama-2-7b-hf.json"
            ))
            .weights,
            Dtype::Fp16,
            Dtype::Fp16,
        );
        assert_eq!(
            plain,
            Precisions::uniform(Dtype::Fp16, Dtype::Fp16, Dtype::Fp16)
        );
    }

    mod props {
        use super::super::*;
        use crate::base::dtype::Dtype;
        use crate::model::quick::quick_model;
        use crate::model::{Ffn, Layer, Mixer};
        use proptest::prelude::*;

        fn mixer() -> impl Strategy<Value = Mixer> {
            prop_oneof![
                (
                    1u64..512,
                    0u64..64,
                    any::<u64>(),
                    proptest::option::of(any::<u64>())
                )
                    .prop_map(|(h, k, d, w)| Mixer::Attention {
                        num_heads: h,
                        kv_heads: k,
                        head_dim: d,
                        v_head_dim: d,
                        window: w
                    }),
                (
                    1u64..512,
                    any::<u64>(),
                    proptest::option::of(any::<u64>()),
                    any::<u64>(),
                    any::<u64>(),
                    any::<u64>()
                )
                    .prop_map(|(h, r, q, n, ro, v)| Mixer::Mla {
                        num_heads: h,
                        kv_lora_rank: r,
                        q_lora_rank: q,
                        qk_nope_head_dim: n,
                        qk_rope_head_dim: ro,
                        v_head_dim: v,
                        indexer: None
                    }),
                (
                    any::<u64>(),
                    any::<u64>(),
                    any::<u64>(),
                    proptest::option::of(any::<(u64, u64, u64, u64)>())
                )
                    .prop_map(|(s, d, n, g)| Mixer::Ssm {
                        state_elems: s,
                        d_inner: d,
                        d_state: n,
                        groups: g.map(|(groups, conv_elems, linear_elems, other_elems)| {
                            crate::model::SsmGroups {
                                groups,
                                conv_elems,
                                linear_elems,
                                other_elems,
                            }
                        }),
                    }),
            ]
        }

        fn ffn() -> impl Strategy<Value = Ffn> {
            prop_oneof![
                (any::<u64>(), any::<bool>()).prop_map(|(i, g)| Ffn::Dense {
                    intermediate: i,
                    gated: g
                }),
                (
                    any::<u64>(),
                    any::<u64>(),
                    any::<u64>(),
                    any::<u64>(),
                    any::<u64>(),
                    any::<bool>(),
                    any::<Option<u64>>()
                )
                    .prop_map(|(e, k, i, s, si, g, l)| Ffn::Moe {
                        experts: e,
                        top_k: k,
                        expert_intermediate: i,
                        shared_experts: s,
                        shared_intermediate: si,
                        gated: g,
                        latent: l
                    }),
                Just(Ffn::None),
            ]
        }

        proptest! {
            #[test]
            fn model_ops_never_panic_or_nan(mx in mixer(), f in ffn(), h in any::<u64>(), v in any::<u64>(),
                                           b in any::<u64>(), s in any::<u64>(), tp in 0u64..16, dec in any::<bool>()) {
                let mut m = quick_model(1, Dtype::Bf16);
                m.hidden_size = h;
                m.vocab_size = v;
                m.layers = vec![Layer { mixer: mx, ffn: f }];
                let w = Pass { phase: if dec { Phase::Decode } else { Phase::Prefill }, batch: b, seq: s };
                let p = Precisions::uniform(Dtype::Fp8, Dtype::Bf16, Dtype::Fp8);
                if let Ok(ops) = model_ops(&m, &w, &p, tp) {
                    for o in &ops {
                        prop_assert!(o.intensity.is_finite() && o.intensity >= 0.0);
                        prop_assert!(!o.flops.0.is_nan());
                    }
                }
            }

            #[test]
            fn decode_intensity_grows_with_batch(b in 1u64..512, c in 1u64..100_000) {
                let mut m = quick_model(1, Dtype::Bf16);
                m.hidden_size = 4096;
                m.vocab_size = 32000;
                m.layers = vec![Layer {
                    mixer: Mixer::Attention { num_heads: 32, kv_heads: 8, head_dim: 128, v_head_dim: 128, window: None },
                    ffn: Ffn::Moe { experts: 64, top_k: 4, expert_intermediate: 1024, shared_experts: 0, shared_intermediate: 0, gated: true, latent: None },
                }];
                let p = Precisions::uniform(Dtype::Bf16, Dtype::Bf16, Dtype::Bf16);
                let i = |b| total(&model_ops(&m, &Pass { phase: Phase::Decode, batch: b, seq: c }, &p, 1).expect("ops"), Phase::Decode).intensity;
                prop_assert!(i(b + 1) >= i(b) * (1.0 - 1e-9));
            }
        }
    }
}
