//! Roofline maths: ridge points, attainable FLOP/s, and per-operator FLOPs, bytes and
//! arithmetic intensity of a transformer in prefill and decode.
//!
//! Conventions (course chapter, section 5 of `WORKED_EXAMPLES.md`; Williams, Waterman &
//! Patterson, "Roofline", CACM 2009):
//! * intensity = FLOPs / bytes moved (FLOP/B); a multiply-add counts as 2 FLOPs;
//! * ridge point = peak FLOP/s / bandwidth; attainable = min(peak, intensity × bandwidth);
//! * a matmul `[M,K] × [K,N]` does `2·M·N·K` FLOPs and moves `b·(M·K + K·N + M·N)` bytes.
//!
//! [`model_ops`] lists the operators of a whole model for one step, per GPU under tensor
//! parallelism, ready for a performance model to time each as
//! `max(FLOPs / (peak × eff), bytes / (bandwidth × eff))`. Weights are counted at the weight
//! precision, activations at the activation precision, the KV cache at the KV precision.

use crate::core::base::derivation::{group, Derivation, Source, Term};
use crate::core::base::dtype::Dtype;
use crate::core::base::error::{CalcError, Phrase};
use crate::core::base::units::{fmt_sig, Bytes, BytesPerSecond, Flops, FlopsPerSecond};
use crate::core::calc::memory::kv_heads_per_rank;
use crate::core::calc::tp::{check_heads as check_tp, state_elems_per_gpu};
use crate::core::calc::weights::is_plain;
use crate::core::model::{Ffn, Mixer, ModelDesc, WeightFormat};
use serde::{Deserialize, Serialize};

/// Which roof limits a workload: the one definition for the roofline and its chart (the
/// performance model's timed passes can also be overhead-bound: `calc::perf::Limit`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Bound {
    /// Below the ridge point: limited by memory bandwidth.
    Memory,
    /// At or above the ridge point: limited by peak compute.
    Compute,
}

pub use crate::core::hardware::catalog::ridge_point;

/// Ridge point with its derivation.
pub fn ridge_derivation(
    peak: FlopsPerSecond,
    bw: BytesPerSecond,
    peak_source: Source,
) -> (f64, Derivation) {
    let r = ridge_point(peak, bw);
    let d = Derivation {
        title_key: "roof_ridge_point".into(),
        formula: "I* = P / β".into(),
        substituted: format!(
            "{} × 10^12 FLOP/s / {} × 10^9 B/s",
            fmt_sig(peak.tflops()),
            fmt_sig(bw.gbps())
        ),
        result: format!("{} FLOP/B", fmt_sig(r)),
        terms: vec![
            Term::num(
                "P",
                "term_peak_flops",
                peak.tflops(),
                "TFLOP/s",
                peak_source,
            ),
            Term::num(
                "β",
                "term_bandwidth",
                bw.gbps(),
                "GB/s",
                Source::Catalog("bandwidth".into()),
            ),
        ],
        notes: vec![],
        ..Default::default()
    };
    (r, d)
}

/// A point on the roofline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Attainable {
    /// `min(peak, intensity × bandwidth)`.
    pub flops_per_s: FlopsPerSecond,
    /// Which roof applies.
    pub bound: Bound,
}

/// Attainable FLOP/s at `intensity` FLOP/B: `min(peak, intensity × bandwidth)`; memory-bound
/// below the ridge point, compute-bound at or above it. Non-finite or negative inputs count
/// as 0.
pub fn attainable(peak: FlopsPerSecond, bw: BytesPerSecond, intensity: f64) -> Attainable {
    let clean = |x: f64| if x.is_finite() && x > 0.0 { x } else { 0.0 };
    let (p, b, i) = (clean(peak.0), clean(bw.0), clean(intensity));
    let mem = i * b;
    if mem < p {
        Attainable {
            flops_per_s: FlopsPerSecond(if mem.is_finite() { mem } else { p }),
            bound: Bound::Memory,
        }
    } else {
        Attainable {
            flops_per_s: FlopsPerSecond(p),
            bound: Bound::Compute,
        }
    }
}

/// Attainable FLOP/s with its derivation: `min(P, I × β)`.
pub fn attainable_derivation(
    peak: FlopsPerSecond,
    bw: BytesPerSecond,
    intensity: f64,
) -> (Attainable, Derivation) {
    let a = attainable(peak, bw, intensity);
    let d = Derivation {
        title_key: "roof_attainable".into(),
        formula: "P_att = min(P, I × β)".into(),
        substituted: format!(
            "min({} TFLOP/s, {} FLOP/B × {} GB/s)",
            fmt_sig(peak.tflops()),
            fmt_sig(intensity),
            fmt_sig(bw.gbps())
        ),
        result: format!(
            "{} TFLOP/s ({})",
            fmt_sig(a.flops_per_s.tflops()),
            match a.bound {
                Bound::Memory => "I × β < P",
                Bound::Compute => "P ≤ I × β",
            }
        ),
        terms: vec![],
        notes: vec![match a.bound {
            Bound::Memory => "note_bound_memory".into(),
            Bound::Compute => "note_bound_compute".into(),
        }],
        ..Default::default()
    };
    (a, d)
}

/// FLOPs, bytes and intensity of one matmul.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MatmulCost {
    /// `2·M·N·K`.
    pub flops: Flops,
    /// `b·(M·K + K·N + M·N)`.
    pub bytes: Bytes,
    /// FLOP/B.
    pub intensity: f64,
}

fn bits_to_bytes(elems: f64, bits: f64) -> Bytes {
    let b = (elems * bits / 8.0).ceil();
    if b.is_finite() && b > 0.0 {
        Bytes(b as u64)
    } else {
        Bytes::ZERO
    }
}

fn intensity_of(flops: Flops, bytes: Bytes) -> f64 {
    if bytes.0 == 0 || !flops.0.is_finite() {
        0.0
    } else {
        flops.0 / bytes.0 as f64
    }
}

/// A matmul `[M, K] × [K, N]`: the matmul explorer's shape (in half precision, 2 bytes per
/// element, for its own FLOPs, bytes and intensity) and the shape [`matmul`] costs at any
/// precision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Matmul {
    /// Rows of the left operand (tokens).
    pub m: u64,
    /// Columns of the right operand.
    pub n: u64,
    /// Shared dimension.
    pub k: u64,
}

/// Bytes per element of the explorer's half-precision matmul.
pub const MATMUL_ELEM_BYTES: u64 = 2;

impl Matmul {
    /// FLOPs = 2·M·N·K (a multiply-add counts as 2).
    pub fn flops(&self) -> Flops {
        Flops(2.0 * self.m as f64 * self.n as f64 * self.k as f64)
    }

    /// Bytes = 2 · (M·K + K·N + M·N): read both operands, write the result, once each.
    pub fn bytes(&self) -> Bytes {
        let elems = (self.m as f64) * (self.k as f64)
            + (self.k as f64) * (self.n as f64)
            + (self.m as f64) * (self.n as f64);
        Bytes::saturating_from_f64(elems * MATMUL_ELEM_BYTES as f64)
    }

    /// Intensity = M·N·K / (M·K + K·N + M·N) FLOP/B (the 2s cancel), computed in f64 so
    /// large inputs do not overflow; 0 for an empty matmul.
    pub fn intensity_flop_per_byte(&self) -> f64 {
        let (m, n, k) = (self.m as f64, self.n as f64, self.k as f64);
        let den = m * k + k * n + m * n;
        if den > 0.0 {
            m * n * k / den
        } else {
            0.0
        }
    }
}

impl Default for Matmul {
    /// The explorer's first shape, M = N = K = 1,024.
    fn default() -> Self {
        Matmul {
            m: 1024,
            n: 1024,
            k: 1024,
        }
    }
}

/// Matmul `[M,K] × [K,N]` with every operand at `dtype`: FLOPs `2·M·N·K`, bytes
/// `b·(M·K + K·N + M·N)`. In half precision the intensity is `M·N·K / (M·K + K·N + M·N)`:
/// `n/3` for `M = N = K = n`.
pub fn matmul(m: u64, k: u64, n: u64, dtype: Dtype) -> MatmulCost {
    let (m, k, n) = (m as f64, k as f64, n as f64);
    let flops = Flops(2.0 * m * n * k);
    let bytes = bits_to_bytes(m * k + k * n + m * n, dtype.bits() as f64);
    MatmulCost {
        flops,
        bytes,
        intensity: intensity_of(flops, bytes),
    }
}

/// Matmul with its derivation.
pub fn matmul_derivation(m: u64, k: u64, n: u64, dtype: Dtype) -> (MatmulCost, Derivation) {
    let c = matmul(m, k, n, dtype);
    let b = dtype.bytes();
    let t = |s: &str, key: &str, v: u64| Term {
        symbol: s.into(),
        name_key: key.into(),
        value: group(v),
        unit: String::new(),
        source: Source::User(s.to_ascii_lowercase()),
    };
    let d = Derivation {
        title_key: "roof_matmul_intensity".into(),
        formula: "I = 2·M·N·K / (b·(M·K + K·N + M·N))".into(),
        substituted: format!(
            "2 × {} × {} × {} / ({} × ({} × {} + {} × {} + {} × {}))",
            group(m),
            group(n),
            group(k),
            fmt_sig(b),
            group(m),
            group(k),
            group(k),
            group(n),
            group(m),
            group(n)
        ),
        result: format!("{} FLOP/B", fmt_sig(c.intensity)),
        terms: vec![
            t("M", "term_m", m),
            t("K", "term_k", k),
            t("N", "term_n", n),
        ],
        notes: vec!["note_half_precision_n_over_3".into()],
        ..Default::default()
    };
    (c, d)
}

/// Prefill (the prompt, all tokens at once) or decode (one new token per sequence).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// Processing a prompt of `seq` tokens per sequence.
    Prefill,
    /// Generating one token per sequence with `seq` tokens of context.
    Decode,
}

/// One step of work: `batch` sequences; `seq` is the prompt length (prefill) or the context
/// length including the new token (decode).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pass {
    /// Phase.
    pub phase: Phase,
    /// Sequences in the batch.
    pub batch: u64,
    /// Prompt length (prefill) or context length (decode), in tokens.
    pub seq: u64,
}

/// Bits per stored element of each kind of tensor.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Precisions {
    /// Decoder linear weights (attention, MLP, SSM projections), including per-group scales.
    pub linear_bits: f64,
    /// Routed-expert weights, including scales.
    pub expert_bits: f64,
    /// Everything else (embeddings, lm_head, norms, routers).
    pub base_bits: f64,
    /// Activations.
    pub act: Dtype,
    /// KV cache.
    pub kv: Dtype,
}

impl Precisions {
    /// Every weight at `weights` (no scale overhead), activations at `act`, KV at `kv`.
    pub fn uniform(weights: Dtype, act: Dtype, kv: Dtype) -> Precisions {
        let b = weights.bits() as f64;
        Precisions {
            linear_bits: b,
            expert_bits: b,
            base_bits: b,
            act,
            kv,
        }
    }

    /// From a checkpoint's weight format: quantized linear layers at `bits + scale_bits/group`
    /// (+ `bits/group` for a zero point), the rest at the base precision.
    pub fn from_format(f: &WeightFormat, act: Dtype, kv: Dtype) -> Precisions {
        // Bits per stored element, scales and zero points included (one linear weight).
        let q = f.bytes_per_element() * 8.0;
        let base = f.base.bits() as f64;
        let plain = is_plain(f);
        let linear = if plain {
            f.dtype.bits() as f64
        } else if f.experts_only {
            base
        } else {
            q
        };
        Precisions {
            linear_bits: linear,
            expert_bits: if plain { f.dtype.bits() as f64 } else { q },
            base_bits: if plain { f.dtype.bits() as f64 } else { base },
            act,
            kv,
        }
    }
}

/// FLOPs and bytes of one operator (summed over `layers` identical layers).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpCost {
    /// Translation key of the operator (`op_attn_q`, `op_mlp_down`, `op_lm_head`, …).
    pub name_key: String,
    /// Phase.
    pub phase: Phase,
    /// Floating-point operations (all `layers`).
    pub flops: Flops,
    /// Bytes moved (all `layers`): weights + activations + KV cache.
    pub bytes: Bytes,
    /// The weight part of `bytes`.
    pub weight_bytes: Bytes,
    /// The KV-cache part of `bytes`.
    pub kv_bytes: Bytes,
    /// FLOP/B.
    pub intensity: f64,
    /// How many identical layers are summed here (1 for lm_head).
    pub layers: u64,
    /// Sliding window of the attention this operator belongs to, when any.
    pub window: Option<u64>,
}

impl OpCost {
    fn new(name: &str, phase: Phase, flops: f64, w: Bytes, act: Bytes, kv: Bytes) -> OpCost {
        let flops = Flops(if flops.is_finite() {
            flops.max(0.0)
        } else {
            f64::MAX
        });
        let bytes = w + act + kv;
        OpCost {
            name_key: name.to_string(),
            phase,
            flops,
            bytes,
            weight_bytes: w,
            kv_bytes: kv,
            intensity: intensity_of(flops, bytes),
            layers: 1,
            window: None,
        }
    }

    /// Where this operator sits on a chip's roofline.
    pub fn place(&self, peak: FlopsPerSecond, bw: BytesPerSecond) -> Attainable {
        attainable(peak, bw, self.intensity)
    }

    /// This operator's intensity as a derivation.
    pub fn derivation(&self) -> Derivation {
        Derivation {
            title_key: self.name_key.clone(),
            formula: "I = F / M".into(),
            substituted: format!("{:.4e} FLOP / {} B", self.flops.0, group(self.bytes.0)),
            result: format!("{} FLOP/B", fmt_sig(self.intensity)),
            terms: vec![
                Term::new(
                    "F",
                    "term_op_flops",
                    format!("{:.4e}", self.flops.0),
                    "FLOP",
                    Source::Derived(self.name_key.clone()),
                ),
                Term::new(
                    "M",
                    "term_op_bytes",
                    group(self.bytes.0),
                    "B",
                    Source::Derived(self.name_key.clone()),
                ),
            ],
            notes: vec!["note_op_bytes_split".into()],
            ..Default::default()
        }
    }
}

/// A linear layer applied to `t` tokens: `[t, din] × [din, dout]`.
fn linear(
    name: &str,
    phase: Phase,
    t: f64,
    din: f64,
    dout: f64,
    wbits: f64,
    act_bits: f64,
) -> OpCost {
    let (di, dout_f) = (din, dout);
    OpCost::new(
        name,
        phase,
        2.0 * t * di * dout_f,
        bits_to_bytes(di * dout_f, wbits),
        bits_to_bytes(t * (di + dout_f), act_bits),
        Bytes::ZERO,
    )
}

/// (query, key) pairs per sequence per head: prefill `Σ_{i=1..S} min(i, W)` (causal), decode
/// `min(C, W)`.
fn attention_pairs(w: &Pass, window: Option<u64>) -> f64 {
    let s = w.seq as f64;
    match (w.phase, window) {
        (Phase::Decode, None) => s,
        (Phase::Decode, Some(win)) => s.min(win as f64),
        (Phase::Prefill, None) => s * (s + 1.0) / 2.0,
        (Phase::Prefill, Some(win)) => {
            let wf = (win as f64).min(s);
            // Σ_{i≤W} i + (S − W)·W
            wf * (wf + 1.0) / 2.0 + (s - wf) * wf
        }
    }
}

/// Keys read per sequence from the cache (flash-attention model: each key once per step).
fn keys_read(w: &Pass, window: Option<u64>) -> f64 {
    let s = w.seq as f64;
    window.map_or(s, |win| s.min(win as f64))
}

/// Expected distinct experts touched by `tokens` tokens each choosing `k` of `e` experts,
/// under uniform routing: `E × (1 − (1 − k/E)^tokens)`.
pub fn expected_distinct_experts(e: u64, k: u64, tokens: f64) -> f64 {
    if e == 0 {
        return 0.0;
    }
    let p = (k.min(e) as f64) / e as f64;
    let r = e as f64 * (1.0 - (1.0 - p).powf(tokens.max(0.0)));
    if r.is_finite() {
        r.clamp(0.0, e as f64)
    } else {
        e as f64
    }
}

/// The quantities every operator of one layer's step shares: the phase, the batch `b`, the
/// new tokens `t = b × s_new`, the hidden size, and the bits of activations, KV cache and
/// linear weights.
#[derive(Clone, Copy)]
struct Step<'a> {
    w: &'a Pass,
    ph: Phase,
    b: f64,
    t: f64,
    hf: f64,
    act: f64,
    kvb: f64,
    lb: f64,
}

impl Step<'_> {
    /// A linear layer of this step (`t` tokens through `din × dout`) in the linear weights'
    /// bits.
    fn linear(&self, name: &str, din: f64, dout: f64) -> OpCost {
        linear(name, self.ph, self.t, din, dout, self.lb, self.act)
    }

    /// An operator of this step without weights (attention's score and weighted sum, the SSM
    /// scan): `flops`, `act_elems` activations in the activation bits and `kv_elems` cached
    /// elements (KV or recurrent state) in the KV bits.
    fn unweighted(&self, name: &str, flops: f64, act_elems: f64, kv_elems: f64) -> OpCost {
        OpCost::new(
            name,
            self.ph,
            flops,
            Bytes::ZERO,
            bits_to_bytes(act_elems, self.act),
            bits_to_bytes(kv_elems, self.kvb),
        )
    }
}

/// The GQA/MQA attention operators (`op_attn_q/k/v`, `op_attn_score`, `op_attn_av`,
/// `op_attn_o`) for `(num_heads, kv_heads)` heads of `(head_dim, v_head_dim)` dims, after
/// checking the heads split across `tp`.
fn gqa_ops(
    st: &Step,
    tp: u64,
    (num_heads, kv_heads): (u64, u64),
    (head_dim, v_head_dim): (u64, u64),
    window: Option<u64>,
) -> Result<Vec<OpCost>, CalcError> {
    let (w, b, t, hf) = (st.w, st.b, st.t, st.hf);
    let mut ops = Vec::new();
    check_tp(num_heads, kv_heads, tp)?;
    let hr = num_heads / tp;
    let hkv = kv_heads_per_rank(kv_heads, tp);
    let (d, dv) = (head_dim, v_head_dim);
    ops.push(st.linear("op_attn_q", hf, hr as f64 * d as f64));
    ops.push(st.linear("op_attn_k", hf, hkv as f64 * d as f64));
    ops.push(st.linear("op_attn_v", hf, hkv as f64 * dv as f64));
    let pairs = attention_pairs(w, window);
    let keys = keys_read(w, window);
    let (hrf, hkvf, df, dvf) = (hr as f64, hkv as f64, d as f64, dv as f64);
    let mut score = st.unweighted(
        "op_attn_score",
        b * hrf * pairs * (2.0 * df + 5.0),
        t * hrf * df,
        b * keys * hkvf * df + t * hkvf * df,
    );
    score.window = window;
    ops.push(score);
    let mut av = st.unweighted(
        "op_attn_av",
        b * hrf * pairs * 2.0 * dvf,
        t * hrf * dvf,
        b * keys * hkvf * dvf + t * hkvf * dvf,
    );
    av.window = window;
    ops.push(av);
    ops.push(st.linear("op_attn_o", hr as f64 * dv as f64, hf));
    Ok(ops)
}

/// MLA's `op_attn_score` and `op_attn_av` for `hr` heads per GPU: the naive form in prefill
/// (q and k of `dqk` dims, v of `dv` dims), the absorbed form in decode (scores over the
/// `latent = kv_lora_rank + qk_rope_head_dim` latent, read once for all heads).
fn mla_score_av(st: &Step, hr: u64, dqk: f64, (r, rope, dv): (u64, u64, u64)) -> [OpCost; 2] {
    let (w, b, t) = (st.w, st.b, st.t);
    let pairs = attention_pairs(w, None);
    let keys = keys_read(w, None);
    let hrf = hr as f64;
    let latent = r as f64 + rope as f64;
    let (score, av) = match st.ph {
        Phase::Prefill => (
            st.unweighted(
                "op_attn_score",
                b * hrf * pairs * (2.0 * dqk + 5.0),
                t * hrf * dqk * 2.0,
                t * latent,
            ),
            st.unweighted(
                "op_attn_av",
                b * hrf * pairs * 2.0 * dv as f64,
                t * hrf * dv as f64 * 2.0,
                0.0,
            ),
        ),
        Phase::Decode => (
            st.unweighted(
                "op_attn_score",
                b * hrf * pairs * (2.0 * latent + 5.0),
                t * hrf * latent,
                b * keys * latent + t * latent,
            ),
            st.unweighted(
                "op_attn_av",
                b * hrf * pairs * 2.0 * r as f64,
                t * hrf * r as f64,
                0.0,
            ),
        ),
    };
    [score, av]
}

/// The MLA operators (`op_attn_q_a/q_b` or `op_attn_q`, `op_attn_kv_a/kv_b`, score, weighted
/// sum, `op_attn_o`), after checking the heads split across `tp`; `dims` is
/// `(kv_lora_rank, qk_rope_head_dim, qk_nope_head_dim, v_head_dim)`.
fn mla_ops(
    st: &Step,
    tp: u64,
    num_heads: u64,
    q_lora_rank: Option<u64>,
    dims: (u64, u64, u64, u64),
) -> Result<Vec<OpCost>, CalcError> {
    let hf = st.hf;
    let mut ops = Vec::new();
    check_tp(num_heads, 0, tp)?;
    let hr = num_heads / tp;
    let (r, rope, nope, dv) = dims;
    let dqk = nope as f64 + rope as f64;
    match q_lora_rank {
        Some(qr) => {
            ops.push(st.linear("op_attn_q_a", hf, qr as f64));
            ops.push(st.linear("op_attn_q_b", qr as f64, hr as f64 * dqk));
        }
        None => ops.push(st.linear("op_attn_q", hf, hr as f64 * dqk)),
    }
    ops.push(st.linear("op_attn_kv_a", hf, r as f64 + rope as f64));
    ops.push(st.linear(
        "op_attn_kv_b",
        r as f64,
        hr as f64 * (nope as f64 + dv as f64),
    ));
    ops.extend(mla_score_av(st, hr, dqk, (r, rope, dv)));
    ops.push(st.linear("op_attn_o", hr as f64 * dv as f64, hf));
    Ok(ops)
}

/// The SSM operators: `op_ssm_in`, `op_ssm_scan` (~9 FLOP per inner channel per state
/// element per token; decode reads and writes the recurrent state) and `op_ssm_out`.
fn ssm_ops(st: &Step, tp: u64, state_on_gpu: u64, d_inner: u64, d_state: u64) -> Vec<OpCost> {
    let (b, t, hf) = (st.b, st.t, st.hf);
    let mut ops = Vec::new();
    let di = d_inner.div_ceil(tp);
    ops.push(st.linear("op_ssm_in", hf, 2.0 * di as f64));
    let state = state_on_gpu as f64;
    // Prefill writes the final state once; decode reads and writes it every step.
    let state_traffic = if st.ph == Phase::Decode {
        2.0 * b * state
    } else {
        b * state
    };
    ops.push(st.unweighted(
        "op_ssm_scan",
        9.0 * t * di as f64 * d_state as f64,
        2.0 * t * di as f64,
        state_traffic,
    ));
    ops.push(st.linear("op_ssm_out", di as f64, hf));
    ops
}

/// The mixer's operators, by kind: GQA/MQA attention, MLA or SSM.
fn mixer_ops(st: &Step, mixer: &Mixer, tp: u64) -> Result<Vec<OpCost>, CalcError> {
    match mixer {
        Mixer::Attention {
            num_heads,
            kv_heads,
            head_dim,
            v_head_dim,
            window,
        } => gqa_ops(
            st,
            tp,
            (*num_heads, *kv_heads),
            (*head_dim, *v_head_dim),
            *window,
        ),
        Mixer::Mla {
            num_heads,
            kv_lora_rank,
            q_lora_rank,
            qk_nope_head_dim,
            qk_rope_head_dim,
            v_head_dim,
        } => mla_ops(
            st,
            tp,
            *num_heads,
            *q_lora_rank,
            (
                *kv_lora_rank,
                *qk_rope_head_dim,
                *qk_nope_head_dim,
                *v_head_dim,
            ),
        ),
        Mixer::Ssm {
            d_inner, d_state, ..
        } => Ok(ssm_ops(
            st,
            tp,
            state_elems_per_gpu(mixer, tp),
            *d_inner,
            *d_state,
        )),
    }
}

/// The MoE operators: `op_moe_router`, `op_moe_experts` (FLOPs of the `top_k` chosen
/// experts, weight bytes of the expected distinct experts touched, at the experts' width: the
/// model's, or a latent MoE's `L`), for a latent MoE `op_moe_latent` (the projections `h → L`
/// and `L → h`, held whole on every GPU) and, with shared experts, `op_moe_shared`. `shared` is
/// `(shared_experts, shared_intermediate)`.
fn moe_ops(
    st: &Step,
    p: &Precisions,
    tp: u64,
    (experts, top_k, expert_intermediate): (u64, u64, u64),
    (shared_experts, shared_intermediate): (u64, u64),
    (gated, latent): (bool, Option<u64>),
) -> Vec<OpCost> {
    let Step {
        ph, t, hf, act, lb, ..
    } = *st;
    let mut ops = Vec::new();
    ops.push(linear(
        "op_moe_router",
        ph,
        t,
        hf,
        experts as f64,
        p.base_bits,
        act,
    ));
    let m = if gated { 3.0 } else { 2.0 };
    let ir = expert_intermediate.div_ceil(tp) as f64;
    let k = top_k.min(experts) as f64;
    let distinct = expected_distinct_experts(experts, top_k, t);
    let ef = latent.map_or(hf, |l| l as f64);
    if let Some(l) = latent {
        let lf = l as f64;
        ops.push(OpCost::new(
            "op_moe_latent",
            ph,
            4.0 * t * hf * lf,
            bits_to_bytes(2.0 * hf * lf, lb),
            bits_to_bytes(2.0 * t * (hf + lf), act),
            Bytes::ZERO,
        ));
    }
    ops.push(OpCost::new(
        "op_moe_experts",
        ph,
        2.0 * t * k * m * ef * ir,
        bits_to_bytes(distinct * m * ef * ir, p.expert_bits),
        bits_to_bytes(t * ef + t * k * (2.0 * ef + m * ir), act),
        Bytes::ZERO,
    ));
    if shared_experts > 0 {
        let is = shared_experts
            .saturating_mul(shared_intermediate)
            .div_ceil(tp) as f64;
        ops.push(OpCost::new(
            "op_moe_shared",
            ph,
            2.0 * t * m * hf * is,
            bits_to_bytes(m * hf * is, lb),
            bits_to_bytes(t * (2.0 * hf + m * is), act),
            Bytes::ZERO,
        ));
    }
    ops
}

/// The feed-forward operators: dense `op_mlp_gate_up` (gated) or `op_mlp_up`, then
/// `op_mlp_down`; MoE ([`moe_ops`]); none for a layer without one.
fn ffn_ops(st: &Step, ffn: &Ffn, p: &Precisions, tp: u64) -> Vec<OpCost> {
    let hf = st.hf;
    let mut ops = Vec::new();
    match ffn {
        Ffn::Dense {
            intermediate,
            gated,
        } => {
            let ir = intermediate.div_ceil(tp);
            if *gated {
                ops.push(st.linear("op_mlp_gate_up", hf, 2.0 * ir as f64));
            } else {
                ops.push(st.linear("op_mlp_up", hf, ir as f64));
            }
            ops.push(st.linear("op_mlp_down", ir as f64, hf));
        }
        Ffn::Moe {
            experts,
            top_k,
            expert_intermediate,
            shared_experts,
            shared_intermediate,
            gated,
            latent,
        } => ops.extend(moe_ops(
            st,
            p,
            tp,
            (*experts, *top_k, *expert_intermediate),
            (*shared_experts, *shared_intermediate),
            (*gated, *latent),
        )),
        Ffn::None => {}
    }
    ops
}

/// The operators of decoder layer `index` for one step, per GPU at tensor-parallel degree
/// `tp`. Operators: `op_norm` (2 RMS/LayerNorms, ~4 FLOP per element), `op_attn_q/k/v/o`
/// (GQA/MQA shapes; MLA `op_attn_q_a/q_b/kv_a/kv_b`), `op_attn_score` (QKᵀ + softmax,
/// reading K) and `op_attn_av` (weighted sum, reading V) with the flash-attention model (the
/// score matrix stays on chip; each cached key is read once per step; sliding layers capped
/// at the window), `op_mlp_gate_up`/`op_mlp_up`/`op_mlp_down`, or for MoE `op_moe_router`,
/// `op_moe_experts` (FLOPs of the `top_k` chosen experts; weight bytes of the expected
/// distinct experts touched, [`expected_distinct_experts`]) and `op_moe_shared`; for SSM
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
        return Err(CalcError::OutOfRange {
            field: Phrase::verbatim("layer"),
            value: index.to_string(),
            range: Phrase::tr("rng_below").val("n", model.layers.len()),
        });
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
        bits_to_bytes(norms * h as f64, p.base_bits),
        bits_to_bytes(norms * 2.0 * t * h as f64, act),
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
    let bad = |field: &str, v: u64| CalcError::OutOfRange {
        field: Phrase::verbatim(field),
        value: v.to_string(),
        range: Phrase::tr("rng_whole_at_least_1"),
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
                    o.intensity = intensity_of(o.flops, o.bytes);
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
        bits_to_bytes(h as f64, p.base_bits),
        bits_to_bytes(2.0 * t_out * h as f64, act),
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
    t.intensity = intensity_of(t.flops, t.bytes);
    t
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ridge_and_bounds() {
        // L40S: 362e12 / 864e9 = 418.98 FLOP/B.
        let peak = FlopsPerSecond::from_tflops(362.0);
        let bw = BytesPerSecond::from_gbps(864.0);
        assert!((ridge_point(peak, bw) - 362e12 / 864e9).abs() < 1e-9);
        let a = attainable(peak, bw, 210.0);
        assert_eq!(a.bound, Bound::Memory);
        assert!((a.flops_per_s.0 - 210.0 * 864e9).abs() < 1.0);
        let c = attainable(peak, bw, 1000.0);
        assert_eq!(c.bound, Bound::Compute);
        assert_eq!(c.flops_per_s.0, 362e12);
        assert_eq!(attainable(peak, bw, f64::NAN).flops_per_s.0, 0.0);
        assert_eq!(ridge_point(peak, BytesPerSecond(0.0)), 0.0);
    }

    #[test]
    fn matmul_half_precision_is_n_over_3() {
        // 2n³ / (2 × 3n²) = n/3.
        for n in [1024u64, 4096] {
            let c = matmul(n, n, n, Dtype::Fp16);
            assert!((c.intensity - n as f64 / 3.0).abs() < 1e-9);
        }
    }

    #[test]
    fn distinct_experts() {
        // One token touches exactly k; many tokens touch all E.
        assert!((expected_distinct_experts(8, 2, 1.0) - 2.0).abs() < 1e-12);
        assert!((expected_distinct_experts(128, 8, 1e6) - 128.0).abs() < 1e-9);
        // Two tokens, E=8, k=2: 8 × (1 − 0.75²) = 3.5.
        assert!((expected_distinct_experts(8, 2, 2.0) - 3.5).abs() < 1e-12);
    }

    #[test]
    fn pairs_causal_and_window() {
        let w = pass(Phase::Prefill, 1, 4);
        assert_eq!(attention_pairs(&w, None), 10.0); // 1+2+3+4
        assert_eq!(attention_pairs(&w, Some(2)), 7.0); // 1+2+2+2
        let d = pass(Phase::Decode, 1, 100);
        assert_eq!(attention_pairs(&d, Some(16)), 16.0);
    }

    fn parse(text: &str) -> ModelDesc {
        crate::core::model::config::parse_model_text(text).expect("fixture parses")
    }

    #[test]
    fn moe_decode_reads_only_active_experts() {
        // Qwen3-30B-A3B: 128 experts, top-8, expert intermediate 768, hidden 2048, gated.
        // Batch 1 decode: exactly 8 experts × 3 × 2,048 × 768 × 2 B per layer.
        let m = parse(include_str!(
            "../../../tests/fixtures/Qwen__Qwen3-30B-A3B.json"
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
            "../../../tests/fixtures/deepseek-ai__DeepSeek-Coder-V2-Lite-Base.json"
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
            "../../../tests/fixtures/deepseek-ai__DeepSeek-Coder-V2-Lite-Base.json"
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
            "../../../tests/fixtures/google__gemma-2-9b-it.json"
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
            "../../../tests/fixtures/meta-llama__Meta-Llama-3.1-8B.json"
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
            "../../../tests/fixtures/openai__gpt-oss-20b.json"
        ));
        let p = Precisions::from_format(&m.weights, Dtype::Bf16, Dtype::Bf16);
        assert_eq!(p.expert_bits, 4.25);
        assert_eq!(p.linear_bits, 16.0);
        assert_eq!(p.base_bits, 16.0);
        let plain = Precisions::from_format(
            &parse(include_str!(
                "../../../tests/fixtures/meta-llama__Llama-2-7b-hf.json"
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
        use crate::core::model::quick::quick_model;
        use crate::core::model::{Ffn, Layer, Mixer};
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
                        v_head_dim: v
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
                            crate::core::model::SsmGroups {
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

            #[test]
            fn attainable_is_bounded(p in any::<f64>(), bw in any::<f64>(), i in any::<f64>()) {
                let a = attainable(FlopsPerSecond(p), BytesPerSecond(bw), i);
                prop_assert!(a.flops_per_s.0.is_finite() && a.flops_per_s.0 >= 0.0);
                if p.is_finite() && p > 0.0 { prop_assert!(a.flops_per_s.0 <= p); }
            }
        }
    }
}
