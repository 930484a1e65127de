//! The vocabulary of the operator inventory: the phase and shape of a pass ([`Pass`]), the
//! precisions its bytes are counted at ([`Precisions`]: weights at the weight precision,
//! activations at the activation precision, the KV cache at the KV precision), one operator's
//! FLOPs and bytes ([`OpCost`]), a linear layer's cost and the step every layer's operators are
//! counted for.

use super::ridge::{attainable, intensity, Attainable};
use crate::base::checked::bits_to_bytes_real;
use crate::base::derivation::{group, Derivation, Source, Term};
use crate::base::dtype::Dtype;
use crate::base::expr::Expr;
use crate::base::units::{fmt_sig, Bytes, BytesPerSecond, Flops, FlopsPerSecond};
use crate::calc::weights::is_plain;
use crate::model::WeightFormat;
use serde::{Deserialize, Serialize};

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
    pub(super) fn new(
        name: &str,
        phase: Phase,
        flops: f64,
        w: Bytes,
        act: Bytes,
        kv: Bytes,
    ) -> OpCost {
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
            intensity: intensity(flops, bytes),
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
        let e = Expr::named(
            "I",
            Expr::over(
                Expr::sym("F", format!("{:.4e} FLOP", self.flops.0), self.flops.0),
                Expr::sym("M", format!("{} B", group(self.bytes.0)), self.bytes.0),
            ),
        );
        // The result is `intensity`, whose rule for a zero or non-finite count the formula
        // does not spell out (`calc::roofline::intensity`).
        Derivation {
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
            ..Derivation::of(&self.name_key, &e)
        }
    }
}

/// A linear layer applied to `t` tokens: `[t, din] × [din, dout]`.
pub(super) fn linear(
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
        bits_to_bytes_real(di * dout_f, wbits),
        bits_to_bytes_real(t * (di + dout_f), act_bits),
        Bytes::ZERO,
    )
}

/// The quantities every operator of one layer's step shares: the phase, the batch `b`, the
/// new tokens `t = b × s_new`, the hidden size, and the bits of activations, KV cache and
/// linear weights.
#[derive(Clone, Copy)]
pub(super) struct Step<'a> {
    pub(super) w: &'a Pass,
    pub(super) ph: Phase,
    pub(super) b: f64,
    pub(super) t: f64,
    pub(super) hf: f64,
    pub(super) act: f64,
    pub(super) kvb: f64,
    pub(super) lb: f64,
}

impl Step<'_> {
    /// A linear layer of this step (`t` tokens through `din × dout`) in the linear weights'
    /// bits.
    pub(super) fn linear(&self, name: &str, din: f64, dout: f64) -> OpCost {
        linear(name, self.ph, self.t, din, dout, self.lb, self.act)
    }

    /// An operator of this step without weights (attention's score and weighted sum, the SSM
    /// scan): `flops`, `act_elems` activations in the activation bits and `kv_elems` cached
    /// elements (KV or recurrent state) in the KV bits.
    pub(super) fn unweighted(
        &self,
        name: &str,
        flops: f64,
        act_elems: f64,
        kv_elems: f64,
    ) -> OpCost {
        OpCost::new(
            name,
            self.ph,
            flops,
            Bytes::ZERO,
            bits_to_bytes_real(act_elems, self.act),
            bits_to_bytes_real(kv_elems, self.kvb),
        )
    }
}
