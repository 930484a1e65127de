//! One step timed: the step's sums (decode queries, prompt chunks) gathered, then its
//! token-proportional work, attention, communication and the engine's time added up
//! ([`KernelStep::finish`]); Marlin's MXFP4 fused MoE on Hopper on the roofline.

use super::{pairs_upto, KernelStep, MEMO_MAX};
use crate::calc::perf::{FIT_BANDWIDTH, FIT_COMPUTE_PREFILL, FIT_MARLIN_HOPPER_MOE_COMPUTE};
use crate::hardware::{GemmDtype, MoeDtype, MoeShape, Roof};
use crate::sim::parallel::{allreduce_on, p2p_s};

impl KernelStep {
    /// Starts a step.
    pub fn begin(&mut self) {
        for a in &mut self.attn {
            a.decode_keys = 0.0;
            a.decodes = 0.0;
            a.pairs = 0.0;
            a.tokens = 0.0;
            a.chunks = 0.0;
        }
    }

    /// One decode query reading `keys` keys.
    pub fn add_decode(&mut self, keys: u64) {
        for a in &mut self.attn {
            a.decode_keys += a.window.map_or(keys, |w| keys.min(w)) as f64;
            a.decodes += 1.0;
        }
    }

    /// `count` decode queries reading `keys` keys in all (full attention only).
    pub fn add_decodes(&mut self, count: u64, keys: u64) {
        for a in &mut self.attn {
            a.decode_keys += keys as f64;
            a.decodes += count as f64;
        }
    }

    /// A prompt chunk of `n` tokens after `computed`.
    pub fn add_prefill(&mut self, computed: u64, n: u64) {
        let (c, e) = (computed as f64, (computed + n) as f64);
        for a in &mut self.attn {
            a.pairs += pairs_upto(e, a.window) - pairs_upto(c, a.window);
            a.tokens += n as f64;
            a.chunks += 1.0;
        }
    }

    /// The parts of the token-proportional work for `t` tokens, seconds, summed over the
    /// layers: (GEMMs, fused MoE, elementwise, all-reduces); they add up to what a step takes
    /// for that work.
    pub fn linear_parts(&self, t: f64) -> [f64; 4] {
        self.linear_work(t).1
    }

    /// One pass of a one-layer drafter (an MTP module, an EAGLE-3 head) over `t` tokens,
    /// seconds: an average layer's token-proportional work and the LM head.
    pub fn draft_pass_s(&self, t: f64) -> f64 {
        if t <= 0.0 {
            return 0.0;
        }
        self.linear_s(t) / self.layers.max(1.0) + self.head_s(t)
    }

    /// The LM head over `t` sampling positions (16-bit), seconds.
    fn head_s(&self, t: f64) -> f64 {
        let (n, kk) = self.head;
        self.kernels
            .gemm_s(&self.roof, t, n, kk, GemmDtype::Bf16)
            .unwrap_or(0.0)
    }

    /// Time of the token-proportional work (GEMMs, MoE, elementwise, all-reduces) for `t`
    /// tokens, seconds.
    fn linear_s(&self, t: f64) -> f64 {
        self.linear_work(t).0
    }

    /// The token-proportional work for `t` tokens, seconds: its total (summed per layer class,
    /// the order a step adds it in) and its parts ([`KernelStep::linear_parts`]). A GEMM shape
    /// or precision the tables lack falls back to their 16-bit GEMM, then to the roofline; a
    /// fused MoE to the 16-bit one. A lower-precision GEMM is never timed slower than the
    /// tables' 16-bit GEMM of the same shape: FP8 and FP4 tensor cores run at least twice the
    /// 16-bit rate and read at most half the bytes, yet the tables' FP8 GEMMs on B200 are
    /// slower than their BF16 ones from 1,024 rows up (1,060 against 1,554 TFLOP/s at 8,192³),
    /// a kernel no engine would keep; the measured runs agree (`docs/SERVING_SIMULATOR.md`).
    fn linear_work(&self, t: f64) -> (f64, [f64; 4]) {
        let (mut s, mut p) = (0.0, [0.0; 4]);
        if t <= 0.0 {
            return (s, p);
        }
        let (k, r) = (self.kernels, &self.roof);
        let dp_tokens = self.par.map_or(1.0, |p| p.dp_tokens);
        let mut moe_layers = 0.0;
        for c in &self.linear {
            if c.moe.is_some() {
                moe_layers += c.layers;
            }
            let elementwise = c.elementwise_bytes * t / r.bw;
            let (mut one, mut gemms) = (elementwise, 0.0);
            for &(n, kk, d) in &c.gemms {
                // A GEMM of another precision is never timed slower than the BF16 one.
                let bf16 = k.gemm_s(r, t, n, kk, GemmDtype::Bf16);
                let own = if d == GemmDtype::Bf16 {
                    bf16
                } else {
                    k.gemm_s(r, t, n, kk, d)
                };
                let g = own
                    .map(|g| bf16.map_or(g, |b| g.min(b)))
                    .or(bf16)
                    .unwrap_or_else(|| crate::hardware::kernels::gemm_roof(r, t, n, kk, d));
                one += g;
                gemms += g;
            }
            let moe = c.moe.map_or(0.0, |(shape, d)| {
                let sh = MoeShape {
                    tokens: t * dp_tokens,
                    ..shape
                };
                match self.marlin {
                    Some(scale) if d == MoeDtype::Mxfp4W4A16 || d == MoeDtype::Int4W4A16 => {
                        marlin_moe_s(r, &sh, d, scale)
                    }
                    _ => k
                        .moe_s(r, &sh, d)
                        .or_else(|| k.moe_s(r, &sh, MoeDtype::Bf16))
                        .unwrap_or(0.0),
                }
            });
            one += moe;
            s += c.layers * one;
            p[0] += c.layers * gemms;
            p[1] += c.layers * moe;
            p[2] += c.layers * elementwise;
        }
        let (layers_comm, handoffs) = self.comm_s(t, moe_layers);
        s += layers_comm;
        p[3] = layers_comm;
        let f = self.stage_factor();
        if f != 1.0 {
            s *= f;
            for x in &mut p {
                *x *= f;
            }
        }
        s += handoffs;
        p[3] += handoffs;
        (s, p)
    }

    /// The slowest pipeline stage's share of the layers times the stages (1 without a
    /// pipeline).
    fn stage_factor(&self) -> f64 {
        self.par
            .map_or(1.0, |p| p.shape.stage_factor(self.layers as u64))
    }

    /// The step's communication for `t` tokens, seconds: tensor parallelism's two
    /// all-reduces of `t × h` 16-bit values per layer; under attention DP, a MoE layer's
    /// second one is the gather and scatter of every rank's tokens over the `tp × dp` GPUs
    /// (timed as one all-reduce of `dp × t × h` values); a pipeline's hand-offs between
    /// stages. Returns (the layers' communication, the hand-offs).
    fn comm_s(&self, t: f64, moe_layers: f64) -> (f64, f64) {
        let k = self.kernels;
        let bytes = t * self.hidden * 2.0;
        let in_node = |b: f64, n: u64| k.allreduce_s(b, n.min(8)).unwrap_or(0.0);
        let Some(p) = self.par else {
            if self.tp > 1 {
                return (2.0 * self.layers * in_node(bytes, self.tp), 0.0);
            }
            return (0.0, 0.0);
        };
        let sh = p.shape;
        let ar = |b: f64, n: u64| allreduce_on(p.per_node, b, n, &in_node);
        let tp_ar = ar(bytes, sh.tp);
        let layers = if sh.dp > 1 {
            let gathered = ar(bytes * p.dp_tokens, sh.moe_gpus());
            (2.0 * self.layers - moe_layers) * tp_ar + moe_layers * gathered
        } else {
            2.0 * self.layers * tp_ar
        };
        let mut handoffs = 0.0;
        if sh.pp > 1 {
            let inside = (sh.pp - 1).saturating_sub(p.crossings) as f64;
            handoffs = inside * p2p_s(bytes, p.link_bw) + p.crossings as f64 * p2p_s(bytes, 0.0);
        }
        (layers, handoffs)
    }

    fn memo_get(memo: &mut Vec<f64>, n: u64, f: impl FnOnce() -> f64) -> f64 {
        let Ok(i) = usize::try_from(n) else {
            return f();
        };
        if i >= MEMO_MAX {
            return f();
        }
        if let Some(v) = memo.get(i).copied().filter(|v| !v.is_nan()) {
            return v;
        }
        let v = f();
        if memo.len() <= i {
            memo.resize((i + 1).next_power_of_two().min(MEMO_MAX), f64::NAN);
        }
        memo[i] = v;
        v
    }

    /// The step's time, seconds: `tokens` new tokens, `sampled` requests sampling.
    pub fn finish(&mut self, tokens: u64, sampled: u64) -> f64 {
        let t = tokens as f64;
        let mut memo = std::mem::take(&mut self.memo);
        let lin = Self::memo_get(&mut memo, tokens, || self.linear_s(t));
        self.memo = memo;
        let mut hm = std::mem::take(&mut self.head_memo);
        let head = Self::memo_get(&mut hm, sampled, || {
            if sampled == 0 {
                0.0
            } else {
                self.head_s(sampled as f64)
            }
        });
        self.head_memo = hm;
        let (k, r) = (self.kernels, self.roof);
        let mut att = 0.0;
        for a in &self.attn {
            if a.decodes > 0.0 {
                let keys = (a.decode_keys / a.decodes).max(1.0);
                att += a.layers
                    * k.decode_attention_s(&r, a.decodes, keys, a.decode_heads, self.kv_fp8)
                        .unwrap_or(0.0);
            }
            if a.chunks > 0.0 {
                att += a.layers
                    * k.prefill_attention_s(
                        &r,
                        a.chunks,
                        a.tokens,
                        a.pairs,
                        a.prefill_heads,
                        self.kv_fp8,
                    )
                    .unwrap_or(0.0);
            }
        }
        // The pipeline's factor is 1 without one: the sum is then bit for bit the plain one.
        let f = self.stage_factor();
        lin + head * f + att * f + self.overhead.at(tokens, self.stage_layers())
    }

    /// The layers of the slowest pipeline stage (all of them without a pipeline).
    pub fn stage_layers(&self) -> f64 {
        let stages = self.par.map_or(1, |p| p.shape.pp.max(1)) as f64;
        self.layers * self.stage_factor() / stages
    }
}

/// Marlin's MXFP4 fused MoE on Hopper, seconds: the experts the tokens reach streamed at the
/// fitted bandwidth efficiency, or the routed FLOPs at the fitted prefill compute efficiency
/// times Marlin's share of it on Hopper ([`FIT_MARLIN_HOPPER_MOE_COMPUTE`], an `mma.sync`
/// kernel without `wgmma`), whichever is longer; `scale` is the padded layout's size over the
/// checkpoint's. The tables hold no Marlin MXFP4 kernel: their MXFP4 rows are the backend vLLM
/// picks without `VLLM_MXFP4_USE_MARLIN` (2.5 times faster than these runs allow at 8,192
/// tokens, twice as slow at 4), and their Marlin INT4 kernel is 3 to 8 times slower than the
/// runs at both ends.
pub(super) fn marlin_moe_s(r: &Roof, s: &MoeShape, d: MoeDtype, scale: f64) -> f64 {
    let ep = s.ep.max(1.0);
    let local = MoeShape {
        experts: s.experts / ep,
        top_k: s.top_k / ep,
        ep: 1.0,
        ..*s
    };
    let bytes = local.active_experts() * local.expert_bytes(d) * scale;
    let flops = 6.0 * local.hidden * local.inter * local.tokens * local.top_k * scale;
    (bytes / (r.bw * FIT_BANDWIDTH))
        .max(flops / (r.bf16 * FIT_COMPUTE_PREFILL * FIT_MARLIN_HOPPER_MOE_COMPUTE))
}
