//! Activation reserve estimate: the peak activation memory of one forward pass, per GPU.

use super::defaults::{default_max_num_batched_tokens, DEFAULT_MAX_NUM_SEQS};
use super::helpers::ceil_div;
use crate::base::checked::bits_to_bytes_saturating;
use crate::base::derivation::bytes_text;
use crate::base::derivation::{group, Derivation, Source, Term};
use crate::base::dtype::Dtype;
use crate::base::error::CalcError;
use crate::base::expr::Expr;
use crate::base::units::{fmt_sig, Bytes};
use crate::calc::kv::kv_heads_per_rank;
use crate::model::{Ffn, Mixer, ModelDesc};
use serde::{Deserialize, Serialize};

/// Settings of the activation estimate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ActivationParams {
    /// Tokens in one forward pass (vLLM `max_num_batched_tokens`, the prefill chunk).
    pub chunk_tokens: u64,
    /// Sequences whose logits are computed at fp32 (vLLM `max_num_seqs`).
    pub logit_rows: u64,
    /// Activation precision.
    pub act: Dtype,
    /// Tensor-parallel degree (per-GPU widths).
    pub tp: u64,
}

impl ActivationParams {
    /// The textbook/vLLM defaults for a GPU of `total_memory`: chunk from
    /// [`default_max_num_batched_tokens`], 256 logit rows, 16-bit activations, TP 1.
    pub fn defaults(total_memory: Bytes) -> ActivationParams {
        ActivationParams {
            chunk_tokens: default_max_num_batched_tokens(total_memory),
            logit_rows: DEFAULT_MAX_NUM_SEQS,
            act: Dtype::Bf16,
            tp: 1,
        }
    }
}

/// The widest intermediate of any layer per GPU, `w_max`, in elements per token: attention
/// `q + k + v + out` widths, MLA's naive prefill widths, SSM `4·d_inner`, gated MLP `3·I`,
/// plain MLP `2·I`, MoE `top_k × 3·I_e` (+ shared experts), each divided by `tp`.
fn widest_intermediate(model: &ModelDesc, tp: u64) -> u64 {
    let mut w_max: u64 = 0;
    for l in &model.layers {
        let mix = match &l.mixer {
            Mixer::Attention {
                num_heads,
                kv_heads,
                head_dim,
                v_head_dim,
                ..
            } => {
                let hq = num_heads / tp;
                let hkv = kv_heads_per_rank(*kv_heads, tp);
                hq.saturating_mul(head_dim.saturating_add(*v_head_dim))
                    .saturating_add(hkv.saturating_mul(head_dim.saturating_add(*v_head_dim)))
            }
            Mixer::Mla {
                num_heads,
                kv_lora_rank,
                qk_nope_head_dim,
                qk_rope_head_dim,
                v_head_dim,
                ..
            } => {
                let hq = num_heads / tp;
                let qk = qk_nope_head_dim.saturating_add(*qk_rope_head_dim);
                // Naive MLA prefill: q and k of qk dims, v and out of v dims, per head.
                hq.saturating_mul(qk.saturating_add(*v_head_dim).saturating_mul(2))
                    .saturating_add(kv_lora_rank.saturating_add(*qk_rope_head_dim))
            }
            Mixer::Ssm { d_inner, .. } => d_inner.saturating_mul(4) / tp,
        };
        let ffn = match &l.ffn {
            Ffn::Dense {
                intermediate,
                gated,
            } => ceil_div(*intermediate, tp).saturating_mul(if *gated { 3 } else { 2 }),
            Ffn::Moe {
                top_k,
                expert_intermediate,
                shared_experts,
                shared_intermediate,
                gated,
                ..
            } => {
                let m = if *gated { 3 } else { 2 };
                top_k
                    .saturating_mul(ceil_div(*expert_intermediate, tp))
                    .saturating_mul(m)
                    .saturating_add(
                        shared_experts
                            .saturating_mul(ceil_div(*shared_intermediate, tp))
                            .saturating_mul(m),
                    )
            }
            Ffn::None => 0,
        };
        w_max = w_max.max(mix).max(ffn);
    }
    w_max
}

/// Estimated peak activation memory of one forward pass, per GPU, with its derivation.
///
/// `A = T × (2h + w_max) × b_act + R × V × 4`: over a chunk of `T = chunk_tokens` tokens, two
/// hidden-size tensors live across the layer (the residual stream and its normed copy) plus the
/// widest intermediate of any layer, `w_max`: gated MLP `3·I` (gate/up output `2·I` and the
/// activated `I`), plain MLP `2·I`, attention `q + k + v + out` widths, MoE `top_k × 3·I_e` (+
/// shared experts), SSM `4·d_inner`; widths per GPU (÷ TP). Then `R = min(logit_rows, T)` rows
/// of logits at fp32 over the full vocabulary `V` (vLLM gathers them on every rank). The KV
/// cache and weights are excluded (counted elsewhere). Checked against vLLM's logged activation
/// peaks: Llama-3.1-8B profiled at 20,000 / 29,000 tokens estimates 2.03 / 2.89 GiB against
/// logged 2.07 / 2.99 GiB (`tests/vllm_observations.rs`). For a model without layer data
/// (quick mode) the estimate is 0 and a note says so.
pub fn activation_estimate(
    model: &ModelDesc,
    ap: &ActivationParams,
) -> Result<(Bytes, Derivation), CalcError> {
    let tp = ap.tp.max(1);
    let h = model.hidden_size;
    let w_max = widest_intermediate(model, tp);
    let width = h.saturating_mul(2).saturating_add(w_max);
    let per_tok = bits_to_bytes_saturating(width, ap.act.bits());
    let rows = ap.logit_rows.min(ap.chunk_tokens);
    let hidden_part = per_tok * ap.chunk_tokens;
    let logits = Bytes(rows.saturating_mul(model.vocab_size).saturating_mul(4));
    let total = if model.layers.is_empty() {
        Bytes::ZERO
    } else {
        hidden_part + logits
    };
    let b_act = ap.act.bytes();
    // The total is counted as vLLM allocates: each token's hidden bytes rounded up, 0 for a
    // model without layers.
    let e = Expr::named(
        "A",
        Expr::add([
            Expr::mul([
                count("T", ap.chunk_tokens),
                Expr::add([twice("2h", h), count("w_max", w_max)]),
                Expr::element_bytes("b_act", ap.act.bits(), ""),
            ]),
            Expr::mul([count("R", rows), count("V", model.vocab_size), Expr::int(4)]),
        ]),
    );
    let d = Derivation {
        result: bytes_text(total, true),
        terms: profile_terms(
            ap.chunk_tokens,
            h,
            w_max,
            b_act,
            rows,
            model.vocab_size,
            ap.act,
        ),
        notes: if model.layers.is_empty() {
            vec!["note_activation_unknown_arch".into()]
        } else {
            vec!["note_activation_estimate".into()]
        },
        ..Derivation::of("mem_activation_estimate", &e)
    };
    Ok((total, d))
}

/// The top-k/top-p implementation vLLM V1's sampler runs in the profiling run
/// (`TopKTopPSampler` in `vllm/v1/sample/ops/topk_topp_sampler.py`, vLLM 0.10.x and 0.11.0).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ProfileSampler {
    /// FlashInfer's `top_k_top_p_sampling_from_logits` (`forward_cuda`): chosen when FlashInfer
    /// ≥ 0.2.3 is installed and `VLLM_USE_FLASHINFER_SAMPLER` is not 0. vLLM's docker image
    /// ships FlashInfer; the pip wheels of 0.10.x have it only as the `vllm[flashinfer]` extra
    /// (vLLM PR #21959).
    FlashInfer,
    /// The PyTorch-native `apply_top_k_top_p` (`forward_native`), which sorts the logits:
    /// chosen without FlashInfer.
    Native,
}

impl ProfileSampler {
    /// Bytes held per logit element (`rows × vocabulary`) at the sampler's peak, all tensors
    /// alive together:
    ///
    /// * both: the logits `compute_logits` returns in the model's 16-bit precision (2 B, still
    ///   referenced by `_dummy_sampler_run`) and the sampler's fp32 copy (`logits.to(float32)`
    ///   in `Sampler.forward`, 4 B; temperature is applied in place);
    /// * FlashInfer (flashinfer 0.3.0 `top_k_top_p_sampling_from_logits`, order
    ///   `top_k_first`): the output of `top_k_mask_logits` (4 B) and its softmax (4 B): 14 B;
    /// * native: `logits.sort()` returns fp32 values (4 B) and int64 indices (8 B), and
    ///   PyTorch's stable CUDA sort (`aten/src/ATen/native/cuda/SortStable.cu`,
    ///   `launch_stable_sort_kernel`) allocates while it runs: for 128 or more rows (and for
    ///   one) int64 source indices (8 B) and CUB's alternate key and value buffers of the
    ///   non-double-buffer `SortPairs` (4 + 8 B): 38 B; for 2 to 127 rows
    ///   (`segmented_sort_pairs_by_full_sort`) two `int2` index-and-segment buffers (16 B), the
    ///   sorted keys (4 B) and CUB's alternate buffers (4 + 8 B): 50 B.
    pub fn bytes_per_logit(self, rows: u64) -> u64 {
        match self {
            ProfileSampler::FlashInfer => 14,
            ProfileSampler::Native if (2..128).contains(&rows) => 50,
            ProfileSampler::Native => 38,
        }
    }

    /// The identifier shown in a derivation's source.
    pub fn id(self) -> &'static str {
        match self {
            ProfileSampler::FlashInfer => "flashinfer",
            ProfileSampler::Native => "pytorch_native",
        }
    }
}

/// The activation peak of vLLM V1's profiling run, per GPU, with its derivation:
///
/// `A = max(T × (2h + w_max) × b_act, (T + 2R) × h × b_act + R × V × s)`.
///
/// vLLM V1 (`GPUModelRunner.profile_run`, `vllm/v1/worker/gpu_model_runner.py`, 0.10.x and
/// 0.11.0) runs one forward pass of `T = max_num_batched_tokens` tokens, then
/// `_dummy_sampler_run` on the last token of `R = min(T, max_num_seqs)` dummy requests, with
/// temperature 0.5, top-p 0.9 and top-k `V − 1`, so the sampler takes its top-k/top-p path.
/// The budget subtracts the increase of PyTorch's `allocated_bytes.all.peak` over that run
/// (`memory_profiling` in `vllm/utils`), the peak of two phases that do not overlap: the
/// forward pass (the estimate of [`activation_estimate`] without its logits: residual, normed
/// copy and the widest intermediate) and the sampler, during which only the forward's output
/// (`T × h`), the sampled rows and their random copy (`2R × h`) are still held, beside the
/// logits, `R × V` elements at `s` bytes each ([`ProfileSampler::bytes_per_logit`]: 14 with
/// FlashInfer, 38 or 50 PyTorch-native). Logits are gathered on every rank (V1 all-gathers
/// them), so `V` is the full vocabulary under tensor parallelism too. Checked against vLLM's
/// logs in `tests/vllm_observations.rs`: gpt-oss-120b on one H100 with the native sampler
/// (vLLM 0.10.1 from pip, vllm-project/vllm#23278, "Available KV cache memory: -2.14 GiB";
/// #27508, 1.71 GiB at utilization 0.95) and Qwen2-7B on an A100 with FlashInfer (vLLM
/// 0.10.1.1, dennislee's logs: 5.01 and 24.83 GiB).
pub fn v1_profile_peak(
    model: &ModelDesc,
    ap: &ActivationParams,
    sampler: ProfileSampler,
) -> Result<(Bytes, Derivation), CalcError> {
    let t = ap.chunk_tokens;
    let rows = ap.logit_rows.min(t);
    let run = ProfileRun {
        t,
        h: model.hidden_size,
        w_max: widest_intermediate(model, ap.tp.max(1)),
        rows,
        vocab: model.vocab_size,
        s: sampler.bytes_per_logit(rows),
    };
    let bits = ap.act.bits();
    let forward = bits_to_bytes_saturating(
        t.saturating_mul(run.h.saturating_mul(2).saturating_add(run.w_max)),
        bits,
    );
    let held = bits_to_bytes_saturating(
        t.saturating_add(rows.saturating_mul(2))
            .saturating_mul(run.h),
        bits,
    );
    let logits = Bytes(rows.saturating_mul(run.vocab).saturating_mul(run.s));
    let sampling = held + logits;
    let total = if model.layers.is_empty() {
        Bytes::ZERO
    } else {
        forward.max(sampling)
    };
    let mut d = profile_peak_derivation(&run, ap.act, sampler, total);
    d.notes = if model.layers.is_empty() {
        vec!["note_activation_unknown_arch".into()]
    } else {
        vec!["note_vllm_profile_sampler".into()]
    };
    Ok((total, d))
}

/// The sizes of vLLM V1's profiling run ([`v1_profile_peak`]): chunk tokens `T`, hidden size
/// `h`, the widest intermediate `w_max`, logit rows `R`, the vocabulary `V` and the sampler's
/// bytes per logit `s`.
struct ProfileRun {
    t: u64,
    h: u64,
    w_max: u64,
    rows: u64,
    vocab: u64,
    s: u64,
}

/// A count as a formula's symbol, grouped in the values (`20,000`).
fn count(symbol: &str, x: u64) -> Expr {
    Expr::sym(symbol, group(x), x)
}

/// `2x` in the formula (no sign: `2h`), `2 × x` in the values.
fn twice(symbol: &str, x: u64) -> Expr {
    Expr::sym(symbol, format!("2 × {}", group(x)), x.saturating_mul(2))
}

/// The derivation of the profiling run's peak, `total` bytes, without notes:
/// `A = max(T × (2h + w_max) × b_act, (T + 2R) × h × b_act + R × V × s)`.
fn profile_peak_derivation(
    run: &ProfileRun,
    act: Dtype,
    sampler: ProfileSampler,
    total: Bytes,
) -> Derivation {
    let b_act = act.bytes();
    let b = || Expr::element_bytes("b_act", act.bits(), "");
    let forward = Expr::mul([
        count("T", run.t),
        Expr::add([twice("2h", run.h), count("w_max", run.w_max)]),
        b(),
    ]);
    let sampling = Expr::add([
        Expr::mul([
            Expr::add([count("T", run.t), twice("2R", run.rows)]),
            count("h", run.h),
            b(),
        ]),
        Expr::mul([
            count("R", run.rows),
            count("V", run.vocab),
            Expr::sym("s", run.s.to_string(), run.s),
        ]),
    ]);
    let e = Expr::named("A", Expr::Max(vec![forward, sampling]));
    let mut terms = profile_terms(run.t, run.h, run.w_max, b_act, run.rows, run.vocab, act);
    terms.push(Term::new(
        "s",
        "term_sampler_bytes",
        run.s.to_string(),
        "B",
        Source::Default(sampler.id().into()),
    ));
    Derivation {
        result: bytes_text(total, true),
        terms,
        ..Derivation::of("vllm_activation_peak", &e)
    }
}

/// The terms both profiling-run derivations share: chunk tokens `T`, hidden size `h`, the widest
/// intermediate `w_max`, bytes per activation `b_act`, logit rows `R` and the vocabulary `V`.
fn profile_terms(
    t: u64,
    h: u64,
    w_max: u64,
    b_act: f64,
    rows: u64,
    vocab: u64,
    act: Dtype,
) -> Vec<Term> {
    vec![
        Term::new(
            "T",
            "term_chunk_tokens",
            group(t),
            "unit_tokens",
            Source::Default("default_max_num_batched_tokens".into()),
        ),
        Term::new(
            "h",
            "term_hidden",
            group(h),
            "",
            Source::ConfigKey("hidden_size".into()),
        ),
        Term::new(
            "w_max",
            "term_widest_intermediate",
            group(w_max),
            "",
            Source::Derived("src_widest_intermediate_per_gpu".into()),
        ),
        Term::new(
            "b_act",
            "term_act_bytes",
            fmt_sig(b_act),
            "B",
            Source::Default(act.id().into()),
        ),
        Term::new(
            "R",
            "term_logit_rows",
            group(rows),
            "",
            Source::Default("max_num_seqs".into()),
        ),
        Term::new(
            "V",
            "term_vocab",
            group(vocab),
            "",
            Source::ConfigKey("vocab_size".into()),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Llama-2-7b with a 2,048-token chunk, 256 logit rows, fp16 activations, TP 1.
    fn llama2_profile() -> (ModelDesc, ActivationParams) {
        let m = crate::model::config::parse_model_text(include_str!(
            "../../../../../tests/fixtures/meta-llama__Llama-2-7b-hf.json"
        ))
        .expect("config");
        let ap = ActivationParams {
            chunk_tokens: 2048,
            logit_rows: 256,
            act: Dtype::Fp16,
            tp: 1,
        };
        (m, ap)
    }

    #[test]
    fn activation_estimate_llama2() {
        // Llama-2-7b, chunk 2,048, 256 rows, fp16: the widest intermediate is the gated MLP,
        // 3 × 11,008 = 33,024 (attention: (32 + 32) × 256 = 16,384). Two residual copies of
        // 4,096. A = 2,048 × (8,192 + 33,024) × 2 + 256 × 32,000 × 4 = 201,588,736 B.
        let (m, ap) = llama2_profile();
        let (a, d) = activation_estimate(&m, &ap).expect("estimate");
        assert_eq!(
            a,
            Bytes(2048 * (2 * 4096 + 3 * 11_008) * 2 + 256 * 32_000 * 4)
        );
        assert!(d.substituted.contains("33,024"));
        // TP 2 halves the MLP width: 3 × 5,504.
        let (a2, _) = activation_estimate(&m, &ActivationParams { tp: 2, ..ap }).expect("estimate");
        assert_eq!(
            a2,
            Bytes(2048 * (2 * 4096 + 3 * 5504) * 2 + 256 * 32_000 * 4)
        );
    }

    #[test]
    fn v1_profile_peak_is_the_larger_phase() {
        let (m, ap) = llama2_profile();
        // Llama-2-7b's 32,000-token vocabulary: the forward pass, 2,048 × (8,192 + 33,024) × 2
        // B = 168,820,736 B, is above FlashInfer's sampler, (2,048 + 512) × 4,096 × 2 + 256 ×
        // 32,000 × 14 = 135,659,520 B.
        let (fi, d) = v1_profile_peak(&m, &ap, ProfileSampler::FlashInfer).expect("peak");
        assert_eq!(fi, Bytes(2048 * (2 * 4096 + 3 * 11_008) * 2));
        assert_eq!(d.title_key, "vllm_activation_peak");
        assert!(d.substituted.contains("× 14)"), "{}", d.substituted);
        // The native sort holds 38 B per logit (256 ≥ 128 rows): 332,267,520 B, the peak.
        let (nat, _) = v1_profile_peak(&m, &ap, ProfileSampler::Native).expect("peak");
        assert_eq!(nat, Bytes((2048 + 512) * 4096 * 2 + 256 * 32_000 * 38));
        // 100 rows take the full-sort path: 50 B per logit.
        let ap100 = ActivationParams {
            logit_rows: 100,
            ..ap
        };
        let (n100, _) = v1_profile_peak(&m, &ap100, ProfileSampler::Native).expect("peak");
        assert_eq!(n100, Bytes((2048 + 200) * 4096 * 2 + 100 * 32_000 * 50));
        // Rows never exceed the chunk's tokens.
        let small = ActivationParams {
            chunk_tokens: 64,
            logit_rows: 256,
            ..ap
        };
        let (_, ds) = v1_profile_peak(&m, &small, ProfileSampler::Native).expect("peak");
        assert!(
            ds.substituted.contains("(64 + 2 × 64)"),
            "{}",
            ds.substituted
        );
        assert!(ds.substituted.ends_with("× 50)"), "{}", ds.substituted);
    }

    #[test]
    fn sampler_bytes_per_logit_follow_the_sort_paths() {
        assert_eq!(ProfileSampler::FlashInfer.bytes_per_logit(1024), 14);
        assert_eq!(ProfileSampler::FlashInfer.bytes_per_logit(1), 14);
        assert_eq!(ProfileSampler::Native.bytes_per_logit(1), 38);
        assert_eq!(ProfileSampler::Native.bytes_per_logit(2), 50);
        assert_eq!(ProfileSampler::Native.bytes_per_logit(127), 50);
        assert_eq!(ProfileSampler::Native.bytes_per_logit(128), 38);
        assert_eq!(ProfileSampler::Native.bytes_per_logit(1024), 38);
    }
}
