//! The time of one engine step (one forward pass of a continuous batch), from the existing
//! performance model: the operators of `core::roofline::model_ops` timed on the roofline with
//! the fitted efficiencies by `core::perf::time_pass`. No constant of its own.
//!
//! A vLLM V1 step runs `d` decode tokens (one per running request, each attending to its own
//! context) and `p` prefill tokens (chunks of prompts, each attending to its request's earlier
//! tokens) as one pass over `T = d + p` tokens:
//!
//! ```text
//! step = linear(T) + head(S) + attention_decode + attention_prefill + all-reduces(T) + overhead
//! ```
//!
//! - `linear(T)`: every operator that is not attention and not the output head (norms, the
//!   q/k/v/o projections, the MLP or the routed experts) for `T` tokens: the weights are read
//!   once for the whole step, which is what makes batching pay.
//! - `head(S)`: the final norm and the lm_head for the `S` requests that sample a token this
//!   step (vLLM computes logits only for those positions).
//! - attention: per attention operator, FLOPs and bytes are linear in the keys each query
//!   attends to (capped at the layer's sliding window) and in the new tokens; the decode part
//!   (all decodes together, decode compute efficiency) and the prefill part (all chunks
//!   together, prefill compute efficiency) are each timed as one operator. The per-key and
//!   per-token coefficients are read from the model's own operators at contexts 1 and 2, so a
//!   step of one request equals the static model's pass exactly.
//! - all-reduces: `core::perf::allreduce_time` of the step's `T × hidden` activations, twice
//!   per layer under tensor parallelism.
//! - overhead: the fitted fixed time of a prefill pass when the step holds prompt tokens, else
//!   that of a decode step (`Efficiencies::prefill_overhead_s`, `step_overhead_s`).
//!
//! Compute efficiency: a step holding prompt tokens runs its linear operators at the prefill
//! efficiency, a decode-only step at the decode one (the two fitted values differ by 3%).
//!
//! Speed: every operator's FLOPs and bytes are affine in the step's token count (a linear
//! layer does `2·T·din·dout` FLOPs and reads its weights once plus `T` rows of activations),
//! except the routed experts, whose weight bytes follow the expected number of distinct
//! experts touched (`core::roofline::expected_distinct_experts`). The coefficients are read
//! once from the operator list at 1 and 2 tokens; a step then updates the operators' FLOPs
//! and bytes in place and calls `time_pass`: O(operators + running requests), no allocation,
//! and exactly the operator list's figures at every token count. The linear and head parts
//! depend only on (token count, phase), so each is computed once per token count and
//! remembered (`StepModel::token_ops_memo`; the same `f64`, as a pure function's value); a
//! step then times only its attention operators.
//!
//! Approximations (stated in `docs/SERVING_SIMULATOR.md`): MLA prefill chunks are timed with
//! the per-key bytes of the absorbed (decode) form; SSM layers' per-sequence state traffic is
//! counted per token for prompt tokens.

mod coefs;
mod experts;

use crate::base::error::{CalcError, Phrase};
use crate::calc::perf::{
    allreduce_time, pass_work, time_pass, timed_hardware, Efficiencies, Hardware, PassWork,
    PerfNote, Phase, Workload, FIT_MARLIN_HOPPER_MOE_COMPUTE,
};
use crate::hardware::Accelerator;
use crate::model::{Ffn, ModelDesc};
use crate::sim::kernel_step::{pairs_upto, KernelStep, StepOverhead};
use crate::sim::parallel::Parallel;
use coefs::{
    capped, distinct, is_attn, is_head, is_linear, select, token_coefs, AttnCoef, AttnSums,
    TokenCoef,
};
use experts::{expert_compute_factor, expert_layout_scale, marlin_on_hopper};

/// Times engine steps for one model, accelerator, TP degree and precision.
#[derive(Debug, Clone)]
pub struct StepModel {
    wl: Workload,
    hw: Hardware,
    eff: Efficiencies,
    notes: Vec<PerfNote>,
    coefs: Vec<AttnCoef>,
    sums: Vec<AttnSums>,
    decode_work: PassWork,
    prefill_work: PassWork,
    linear: Vec<TokenCoef>,
    linear_work: PassWork,
    head: Vec<TokenCoef>,
    head_work: PassWork,
    moe: Option<(u64, u64)>,
    /// Factor on the routed experts' FLOPs and weight bytes: vLLM's padded MXFP4 layout over
    /// the checkpoint's shapes ([`expert_layout_scale`]), 1 otherwise.
    expert_scale: f64,
    /// Whether the routed experts run through Marlin's MXFP4 kernel on Hopper.
    marlin_on_hopper: bool,
    /// Divisor of the routed experts' compute efficiency ([`FIT_MARLIN_HOPPER_MOE_COMPUTE`]
    /// where it applies, else 1).
    expert_compute: f64,
    allreduces: u64,
    allreduce_bytes_per_token: f64,
    /// The model's decoder layers (a one-layer drafter's share of the linear work).
    layers: f64,
    /// Time per sampling request beyond the first, per step, seconds: 0 (nothing of the
    /// kind is modelled) unless a sensitivity sets it ([`StepModel::with_per_sequence_cost`]).
    per_sequence_s: f64,
    decodes: f64,
    prefill_tokens: f64,
    /// The measured-kernel step model, where the GPU (or its sibling) has tables and the model
    /// is covered; every step is then timed by it.
    kernel: Option<KernelStep>,
    /// [`StepModel::token_ops`] already computed, by `[phase][head][tokens]` (NaN: not yet;
    /// at most [`MEMO_MAX`] token counts): a pure function of its arguments, so a step
    /// reads the very value it would compute.
    memo: [[Vec<f64>; 2]; 2],
}

/// Most token counts [`StepModel`] remembers the linear and head times of (per phase and
/// kind; vLLM's token budget is 8,192 or 2,048 by default, and the sampled requests at most
/// `max_num_seqs`).
const MEMO_MAX: usize = 1 << 16;

impl StepModel {
    /// Builds the step model. `wl` gives the TP degree and precisions (its batch and lengths
    /// are ignored); `max_context` is the longest context a request can reach (used to find
    /// each attention layer's sliding window).
    pub fn new(
        model: &ModelDesc,
        gpu: &Accelerator,
        wl: &Workload,
        eff: &Efficiencies,
        max_context: u64,
    ) -> Result<StepModel, CalcError> {
        let mut wl = *wl;
        wl.batch = 1;
        wl.input_len = 1;
        wl.output_len = 1;
        let (hw, notes) = timed_hardware(model, gpu, &wl, eff)?;
        let probe = |phase: Phase, len: u64| -> Result<PassWork, CalcError> {
            let mut w = wl;
            w.input_len = len;
            pass_work(model, &w, phase, len.saturating_sub(1))
        };
        let (d1, d2) = (probe(Phase::Decode, 1)?, probe(Phase::Decode, 2)?);
        let dl = probe(Phase::Decode, max_context.max(2))?;
        let (p1, p2) = (probe(Phase::Prefill, 1)?, probe(Phase::Prefill, 2)?);
        let attn = |w: &PassWork| -> Vec<(f64, f64)> {
            w.ops
                .iter()
                .filter(|o| is_attn(&o.name))
                .map(|o| (o.flops.0, o.bytes))
                .collect()
        };
        let (a1, a2, al, q1, q2) = (attn(&d1), attn(&d2), attn(&dl), attn(&p1), attn(&p2));
        let n = a1.len();
        if [a2.len(), al.len(), q1.len(), q2.len()]
            .iter()
            .any(|&k| k != n)
        {
            return Err(CalcError::BadValue {
                key: "attention operators".into(),
                found: Phrase::verbatim(format!("{n}")),
                expected: Phrase::tr("exp_sim_same_ops"),
            });
        }
        let lmax = max_context.max(2) as f64;
        let mut coefs = Vec::with_capacity(n);
        for i in 0..n {
            let (f1, b1) = a1[i];
            let (f2, b2) = a2[i];
            let fpk = f2 - f1;
            let ftok = f1 - fpk;
            let (fl, _) = al[i];
            // Decode at context L − 1 attends to min(L, W) keys: fewer means a window.
            let keys_at_l = if fpk > 0.0 { (fl - ftok) / fpk } else { lmax };
            let window = (keys_at_l < lmax - 0.5).then(|| keys_at_l.round().max(1.0) as u64);
            coefs.push(AttnCoef {
                window,
                flops_per_key: fpk,
                flops_per_token: ftok,
                flops_per_pair: (q2[i].0 - q1[i].0) / 2.0,
                bytes_per_key: b2 - b1,
                bytes_per_token: b1 - (b2 - b1),
            });
        }
        let mut two = wl;
        two.batch = 2;
        let t2 = pass_work(model, &two, Phase::Decode, 0)?;
        if t2.ops.len() != d1.ops.len() || t2.ops.iter().zip(&d1.ops).any(|(a, b)| a.name != b.name)
        {
            return Err(CalcError::BadValue {
                key: "operators".into(),
                found: Phrase::verbatim(format!("{} / {}", d1.ops.len(), t2.ops.len())),
                expected: Phrase::tr("exp_sim_same_ops"),
            });
        }
        let moe = model.layers.iter().find_map(|l| match l.ffn {
            Ffn::Moe { experts, top_k, .. } => Some((experts, top_k)),
            _ => None,
        });
        Ok(StepModel {
            wl,
            hw,
            eff: *eff,
            notes,
            sums: vec![AttnSums::default(); n],
            coefs,
            decode_work: select(&d1, Phase::Decode, is_attn),
            prefill_work: select(&d1, Phase::Prefill, is_attn),
            linear: token_coefs(&d1, &t2, is_linear, moe),
            linear_work: select(&d1, Phase::Decode, is_linear),
            head: token_coefs(&d1, &t2, is_head, moe),
            head_work: select(&d1, Phase::Decode, is_head),
            moe,
            expert_scale: expert_layout_scale(model, gpu, &wl),
            marlin_on_hopper: marlin_on_hopper(model, gpu, &wl),
            expert_compute: expert_compute_factor(
                marlin_on_hopper(model, gpu, &wl),
                FIT_MARLIN_HOPPER_MOE_COMPUTE,
            ),
            allreduces: d1.allreduces,
            allreduce_bytes_per_token: d1.allreduce_bytes,
            layers: model.layers.len() as f64,
            per_sequence_s: 0.0,
            decodes: 0.0,
            prefill_tokens: 0.0,
            kernel: KernelStep::new(
                model,
                gpu,
                wl.tp,
                wl.weights_dtype,
                wl.kv_dtype
                    .unwrap_or(crate::calc::kv::auto_kv_dtype(model.weights.base)),
                StepOverhead::fitted(true),
            )
            .map(|k| {
                if marlin_on_hopper(model, gpu, &wl) {
                    k.with_marlin_moe(expert_layout_scale(model, gpu, &wl))
                } else {
                    k
                }
            }),
            memo: Default::default(),
        })
    }

    /// The same step model for an engine other than vLLM when `vllm` is false: the routed
    /// MXFP4 experts on Hopper are then timed by the tables' MXFP4 kernel rather than by
    /// Marlin's, which only vLLM runs for them (`KernelStep::with_marlin_moe`).
    pub fn for_vllm(mut self, vllm: bool) -> StepModel {
        if !vllm {
            self.kernel = self.kernel.map(KernelStep::without_marlin_moe);
        }
        self
    }

    /// The measured-kernel step model in use, if any.
    pub fn kernel(&self) -> Option<&KernelStep> {
        self.kernel.as_ref()
    }

    /// The same step model under the instance's parallelism `p` on `gpu`
    /// (`KernelStep::with_parallel`; measured kernels only: the roofline model times tensor
    /// parallelism alone, and says so in a note). Plain tensor parallelism inside one node
    /// changes nothing.
    pub fn with_parallel(mut self, p: Parallel, gpu: &Accelerator) -> StepModel {
        if p.beyond_tp(gpu) {
            self.kernel = self.kernel.take().map(|k| k.with_parallel(p, gpu));
            self.memo = Default::default();
        }
        self
    }

    /// Runs the MoE layers on the tokens of `ranks` DP ranks from now on
    /// (`KernelStep::set_active_ranks`); whether the step times changed.
    pub fn set_active_ranks(&mut self, ranks: u64) -> bool {
        self.kernel
            .as_mut()
            .is_some_and(|k| k.set_active_ranks(ranks))
    }

    /// The same step model without the measured kernels (the fitted roofline only).
    pub fn roofline_only(mut self) -> StepModel {
        self.kernel = None;
        self
    }

    /// The same step model with the engine's time per step set to `o` (measured kernels only).
    pub fn with_step_overhead(mut self, o: StepOverhead) -> StepModel {
        if let Some(k) = self.kernel.take() {
            self.kernel = Some(k.with_overhead(o));
        }
        self
    }

    /// The notes of the hardware resolution (precision fallbacks, no published peak, …).
    pub fn notes(&self) -> &[PerfNote] {
        &self.notes
    }

    /// The efficiencies used.
    pub fn efficiencies(&self) -> &Efficiencies {
        &self.eff
    }

    /// Starts a new step.
    pub fn begin(&mut self) {
        if let Some(k) = &mut self.kernel {
            k.begin();
        }
        for s in &mut self.sums {
            *s = AttnSums::default();
        }
        self.decodes = 0.0;
        self.prefill_tokens = 0.0;
    }

    /// Adds one decode token whose query attends to `keys` tokens (its context including
    /// itself).
    pub fn add_decode(&mut self, keys: u64) {
        if let Some(k) = &mut self.kernel {
            k.add_decode(keys);
            return;
        }
        let k = keys as f64;
        for (s, c) in self.sums.iter_mut().zip(&self.coefs) {
            s.decode_keys += capped(k, c.window);
        }
        self.decodes += 1.0;
    }

    /// Adds `count` decode tokens whose queries attend to `keys` tokens in all, as
    /// [`StepModel::add_decode`] once for each would (the per-operator sums are sums of
    /// integers, exact in an `f64`, so one addition of the total gives the same bits). Only
    /// for a model without sliding windows ([`StepModel::full_attention`]): with one, each
    /// context is capped on its own, and this adds nothing.
    pub fn add_decodes(&mut self, count: u64, keys: u64) {
        debug_assert!(
            self.full_attention(),
            "add_decodes on a sliding-window model"
        );
        if !self.full_attention() {
            return;
        }
        if let Some(k) = &mut self.kernel {
            k.add_decodes(count, keys);
            return;
        }
        let k = keys as f64;
        for s in &mut self.sums {
            s.decode_keys += k;
        }
        self.decodes += count as f64;
    }

    /// No attention operator has a sliding window: a decode-only step's time depends on its
    /// decodes only through their number and the sum of their contexts.
    pub fn full_attention(&self) -> bool {
        if let Some(k) = &self.kernel {
            return k.full_attention();
        }
        self.coefs.iter().all(|c| c.window.is_none())
    }

    /// Adds a prefill chunk of `n` tokens after `computed` tokens already in the cache.
    pub fn add_prefill(&mut self, computed: u64, n: u64) {
        if let Some(k) = &mut self.kernel {
            k.add_prefill(computed, n);
            return;
        }
        let (c, end) = (computed as f64, (computed + n) as f64);
        for (s, co) in self.sums.iter_mut().zip(&self.coefs) {
            s.prefill_pairs += pairs_upto(end, co.window) - pairs_upto(c, co.window);
            s.prefill_keys += capped(end, co.window);
        }
        self.prefill_tokens += n as f64;
    }

    /// The step's time, seconds: `tokens` new tokens in all, `sampled` of the requests
    /// sampling a token.
    pub fn finish(&mut self, tokens: u64, sampled: u64) -> f64 {
        if let Some(k) = &mut self.kernel {
            let t = k.finish(tokens, sampled);
            return t + self.per_sequence_s * sampled.saturating_sub(1) as f64;
        }
        let prefill = self.prefill_tokens > 0.0;
        let phase = if prefill {
            Phase::Prefill
        } else {
            Phase::Decode
        };
        let linear = self.token_ops_memo(tokens, phase, false);
        let head = self.token_ops_memo(sampled, phase, true);
        for (i, (s, c)) in self.sums.iter().zip(&self.coefs).enumerate() {
            if let Some(op) = self.decode_work.ops.get_mut(i) {
                op.flops.0 = c.flops_per_key * s.decode_keys + c.flops_per_token * self.decodes;
                op.bytes = c.bytes_per_key * s.decode_keys + c.bytes_per_token * self.decodes;
            }
            if let Some(op) = self.prefill_work.ops.get_mut(i) {
                op.flops.0 = c.flops_per_pair * s.prefill_pairs;
                op.bytes =
                    c.bytes_per_key * s.prefill_keys + c.bytes_per_token * self.prefill_tokens;
            }
        }
        let tp = self.wl.tp;
        let attn = time_pass(&self.decode_work, &self.hw, &self.eff, tp).ops.0
            + time_pass(&self.prefill_work, &self.hw, &self.eff, tp).ops.0;
        let comm = self.allreduces as f64
            * allreduce_time(
                self.allreduce_bytes_per_token * tokens as f64,
                tp,
                self.hw.link_one_way,
                &self.eff,
            );
        let overhead = if prefill {
            self.eff.prefill_overhead_s
        } else {
            self.eff.step_overhead_s
        };
        let t = linear + head + attn + comm + overhead;
        if self.per_sequence_s > 0.0 {
            t + self.per_sequence_s * sampled.saturating_sub(1) as f64
        } else {
            t
        }
    }

    /// One pass of a one-layer drafter (an MTP module, an EAGLE-3 head) over `n` tokens,
    /// seconds: an average layer's token-proportional work and the LM head, at decode.
    pub fn draft_pass_s(&mut self, n: u64) -> f64 {
        if let Some(k) = &self.kernel {
            return k.draft_pass_s(n as f64);
        }
        let layers = self.layers.max(1.0);
        self.token_ops_memo(n, Phase::Decode, false) / layers
            + self.token_ops_memo(n, Phase::Decode, true)
    }

    /// [`StepModel::token_ops`], remembered by its arguments.
    fn token_ops_memo(&mut self, n: u64, phase: Phase, head: bool) -> f64 {
        let Ok(i) = usize::try_from(n) else {
            return self.token_ops(n, phase, head);
        };
        if i >= MEMO_MAX {
            return self.token_ops(n, phase, head);
        }
        let p = usize::from(phase == Phase::Prefill);
        let known = self.memo[p][usize::from(head)]
            .get(i)
            .copied()
            .filter(|t| !t.is_nan());
        if let Some(t) = known {
            return t;
        }
        let t = self.token_ops(n, phase, head);
        let m = &mut self.memo[p][usize::from(head)];
        if m.len() <= i {
            m.resize((i + 1).next_power_of_two().min(MEMO_MAX), f64::NAN);
        }
        if let Some(slot) = m.get_mut(i) {
            *slot = t;
        }
        t
    }

    /// Time of the linear (or head) operators for `n` tokens at `phase`, seconds.
    fn token_ops(&mut self, n: u64, phase: Phase, head: bool) -> f64 {
        if n == 0 {
            return 0.0;
        }
        let t = n as f64;
        let d = distinct(self.moe, t);
        let (coefs, work) = if head {
            (&self.head, &mut self.head_work)
        } else {
            (&self.linear, &mut self.linear_work)
        };
        work.phase = phase;
        for (op, c) in work.ops.iter_mut().zip(coefs) {
            let (k, kc) = if c.expert_bytes > 0.0 {
                (self.expert_scale, self.expert_compute)
            } else {
                (1.0, 1.0)
            };
            op.flops.0 = (c.flops0 + c.flops1 * t) * k / kc;
            op.bytes = c.bytes0 + c.bytes1 * t + c.expert_bytes * d * k;
        }
        time_pass(work, &self.hw, &self.eff, self.wl.tp).ops.0
    }

    /// The same step model with the Marlin-on-Hopper compute factor `k` in place of
    /// [`FIT_MARLIN_HOPPER_MOE_COMPUTE`] (clamped to [0.001, 1]; no effect where the factor
    /// does not apply): the fit of that constant re-derives it through this.
    pub fn with_marlin_hopper_moe_compute(mut self, k: f64) -> StepModel {
        self.expert_compute = expert_compute_factor(self.marlin_on_hopper, k);
        self.memo = Default::default();
        self
    }

    /// The same step model with a time per step for every request sampling a token beyond
    /// the first (`seconds`, divided by the TP degree when `per_rank`), the form of an
    /// engine's per-request work each step (vLLM V0's scheduler, sampler and output
    /// processing: `docs/history/SERVING_SIMULATOR.md`). Not part of the model: the
    /// cross-validation in `tests/serving_validation.rs` tries it, and nothing else sets it. One
    /// request's step is unchanged, so the batch-1 equality with the static model holds.
    pub fn with_per_sequence_cost(mut self, seconds: f64, per_rank: bool) -> StepModel {
        let ranks = if per_rank {
            self.wl.tp.max(1) as f64
        } else {
            1.0
        };
        self.per_sequence_s = if seconds.is_finite() {
            seconds.max(0.0) / ranks
        } else {
            0.0
        };
        self
    }

    /// Times the routed experts at the checkpoint's shapes (as the static model does).
    #[cfg(test)]
    fn checkpoint_shapes(&mut self) {
        self.expert_scale = 1.0;
        self.expert_compute = 1.0;
        self.memo = Default::default();
    }

    /// Linear and head operator times for `n` tokens straight from the operator list (the
    /// reference the coefficients are tested against): linear decode, linear prefill, head
    /// decode, head prefill.
    #[cfg(test)]
    fn evaluate(&self, model: &ModelDesc, n: u64) -> Result<[f64; 4], CalcError> {
        let mut wl = self.wl;
        wl.batch = n.max(1);
        let w = pass_work(model, &wl, Phase::Decode, 0)?;
        let part = |phase: Phase, keep: fn(&str) -> bool| {
            time_pass(&select(&w, phase, keep), &self.hw, &self.eff, wl.tp)
                .ops
                .0
        };
        Ok([
            part(Phase::Decode, is_linear),
            part(Phase::Prefill, is_linear),
            part(Phase::Decode, is_head),
            part(Phase::Prefill, is_head),
        ])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calc::perf::evaluate;
    use crate::hardware::{Architecture, Catalog};
    use crate::model::parse_model_text;
    use crate::model::presets;

    fn model(id: &str) -> ModelDesc {
        let p = presets::get(id).expect("preset");
        parse_model_text(p.json()).expect("parses")
    }

    /// One request alone: the prefill step equals the static TTFT and a decode step at
    /// context `I + O/2` equals the static TPOT (same operators, same efficiencies), for a
    /// dense model, a sliding-window MoE and tensor parallelism.
    #[test]
    fn one_request_equals_the_static_model() {
        let cat = Catalog::builtin();
        for (id, gpu, tp) in [
            ("Qwen__Qwen3-8B", "h100-sxm", 1),
            ("openai__gpt-oss-20b", "h100-sxm", 1),
            ("meta-llama__Meta-Llama-3.1-70B", "h100-sxm", 4),
            (
                "deepseek-ai__DeepSeek-Coder-V2-Lite-Base",
                "a100-sxm-80gb",
                1,
            ),
        ] {
            let m = model(id);
            let g = cat.get(gpu).expect("gpu");
            let (i, o) = (3000u64, 400u64);
            let wl = Workload::new(1, i, o, tp);
            let eff = Efficiencies::default();
            let r = evaluate(&m, g, &wl, &eff, None).expect("static");
            // The roofline step model (the measured-kernel one is not the static model's).
            let mut s = StepModel::new(&m, g, &wl, &eff, 8192)
                .expect("step model")
                .roofline_only();
            // vLLM's padded MXFP4 expert layout is the simulator's own (tested below).
            s.checkpoint_shapes();
            s.begin();
            s.add_prefill(0, i);
            let ttft = s.finish(i, 1);
            s.begin();
            // The static decode step reads `ctx + 1` keys at ctx = I + O/2.
            s.add_decode(wl.decode_context() + 1);
            let tpot = s.finish(1, 1);
            let rel = |a: f64, b: f64| (a - b).abs() / b;
            assert!(
                rel(ttft, r.ttft.0) < 1e-6,
                "{id}: ttft {ttft} vs {}",
                r.ttft.0
            );
            assert!(
                rel(tpot, r.tpot.0) < 1e-6,
                "{id}: tpot {tpot} vs {}",
                r.tpot.0
            );
        }
    }

    /// Batching pays: 64 decodes in one step take far less than 64 single steps, and more
    /// than one; and the coefficients reproduce the operator list at any token count (dense
    /// and MoE).
    #[test]
    fn batching_and_interpolation() {
        let cat = Catalog::builtin();
        let m = model("Qwen__Qwen3-8B");
        let g = cat.get("h100-sxm").expect("gpu");
        let wl = Workload::new(1, 1, 1, 1);
        let eff = Efficiencies::default();
        let mut s = StepModel::new(&m, g, &wl, &eff, 4096).expect("model");
        s.begin();
        s.add_decode(1000);
        let one = s.finish(1, 1);
        s.begin();
        for _ in 0..64 {
            s.add_decode(1000);
        }
        let many = s.finish(64, 64);
        assert!(many > one && many < 8.0 * one, "{one} {many}");
        for id in [
            "Qwen__Qwen3-8B",
            "Qwen__Qwen3-30B-A3B",
            "openai__gpt-oss-20b",
        ] {
            let m = model(id);
            let mut s = StepModel::new(&m, g, &wl, &eff, 4096).expect("model");
            s.checkpoint_shapes();
            for n in [3u64, 37, 300, 1000, 4000, 8191] {
                let exact = s.evaluate(&m, n).unwrap();
                let got = [
                    s.token_ops(n, Phase::Decode, false),
                    s.token_ops(n, Phase::Prefill, false),
                    s.token_ops(n, Phase::Decode, true),
                    s.token_ops(n, Phase::Prefill, true),
                ];
                for (a, b) in got.iter().zip(exact) {
                    assert!((a - b).abs() <= 1e-8 * b, "{id} n={n}: {a} vs {b}");
                }
            }
        }
    }

    /// The per-request cost of the cross-validation adds `(S − 1) × t` to a step where `S`
    /// requests sample (divided by the TP degree when asked), leaves one request's step as
    /// it was, and a bad value sets nothing.
    #[test]
    fn per_sequence_cost_adds_its_time_per_extra_request() {
        let cat = Catalog::builtin();
        let m = model("meta-llama__Meta-Llama-3.1-70B");
        let g = cat.get("h100-sxm").expect("gpu");
        let wl = Workload::new(1, 1, 1, 4);
        let eff = Efficiencies::default();
        let step = |s: &mut StepModel, n: u64| {
            s.begin();
            for _ in 0..n {
                s.add_decode(700);
            }
            s.finish(n, n)
        };
        let base = StepModel::new(&m, g, &wl, &eff, 4096).expect("model");
        let t = 85e-6;
        for (per_rank, ranks) in [(false, 1.0), (true, 4.0)] {
            let mut plain = base.clone();
            let mut with = base.clone().with_per_sequence_cost(t, per_rank);
            assert_eq!(step(&mut with, 1), step(&mut plain, 1));
            let added = step(&mut with, 33) - step(&mut plain, 33);
            assert!((added - 32.0 * t / ranks).abs() < 1e-12, "{added}");
        }
        for bad in [f64::NAN, -1.0, f64::INFINITY] {
            let mut plain = base.clone();
            let mut with = base.clone().with_per_sequence_cost(bad, false);
            assert_eq!(step(&mut with, 9), step(&mut plain, 9), "{bad}");
        }
    }

    /// The shortcuts give the very bits of the long way: decodes added as a count and a sum
    /// of contexts equal the same decodes added one by one (with a prefill chunk in the step),
    /// and a remembered linear or head time equals a fresh one; a sliding-window model is not
    /// full attention, so the scheduler adds its decodes one by one.
    #[test]
    fn summed_decodes_and_remembered_times_are_bit_identical() {
        let cat = Catalog::builtin();
        let g = cat.get("h100-sxm").expect("gpu");
        let wl = Workload::new(1, 1, 1, 1);
        let eff = Efficiencies::default();
        let keys = [17u64, 4000, 1, 999, 8191, 250, 3];
        for id in ["Qwen__Qwen3-8B", "Qwen__Qwen3-30B-A3B"] {
            let m = model(id);
            let fresh = || StepModel::new(&m, g, &wl, &eff, 8192).expect("model");
            let mut one_by_one = fresh();
            assert!(one_by_one.full_attention(), "{id}");
            one_by_one.begin();
            one_by_one.add_prefill(100, 300);
            for k in keys {
                one_by_one.add_decode(k);
            }
            let a = one_by_one.finish(307, 8);
            let mut summed = fresh();
            summed.begin();
            summed.add_prefill(100, 300);
            summed.add_decodes(keys.len() as u64, keys.iter().sum());
            let b = summed.finish(307, 8);
            assert_eq!(a.to_bits(), b.to_bits(), "{id}: {a} vs {b}");
            let mut s = fresh();
            for n in [1u64, 37, 300, 8191] {
                for phase in [Phase::Decode, Phase::Prefill] {
                    for head in [false, true] {
                        let direct = s.token_ops(n, phase, head);
                        let first = s.token_ops_memo(n, phase, head);
                        let again = s.token_ops_memo(n, phase, head);
                        assert_eq!(direct.to_bits(), first.to_bits(), "{id} {n}");
                        assert_eq!(first.to_bits(), again.to_bits(), "{id} {n}");
                    }
                }
            }
        }
        let m = model("google__gemma-2-9b-it");
        let s = StepModel::new(&m, g, &wl, &eff, 8192).expect("model");
        assert!(!s.full_attention());
    }

    /// vLLM's Marlin layout of MXFP4 experts on GPUs without native FP4: gpt-oss's 2,880 ×
    /// 2,880 experts run as 2,944 × 3,072 at TP 1 and 1,536 × 3,072 per partition at TP 2; the
    /// step's expert FLOPs and weight bytes grow by that ratio, nothing else moves.
    #[test]
    fn mxfp4_experts_at_the_padded_shapes() {
        let cat = Catalog::builtin();
        let m = model("openai__gpt-oss-120b");
        let eff = Efficiencies::default();
        let scale = |gpu: &str, tp: u64| {
            let g = cat.get(gpu).expect("gpu");
            StepModel::new(&m, g, &Workload::new(1, 1, 1, tp), &eff, 4096)
                .expect("model")
                .expert_scale
        };
        let r1 = (2944.0 * 3072.0) / (2880.0 * 2880.0);
        let r2 = (1536.0 * 3072.0) / (1440.0 * 2880.0);
        assert!((scale("h100-sxm", 1) - r1).abs() < 1e-9);
        assert!((scale("a100-sxm-80gb", 2) - r2).abs() < 1e-9);
        assert_eq!(scale("mi300x", 1), 1.0);
        let g = cat.get("h100-sxm").expect("gpu");
        let wl = Workload::new(1, 1, 1, 1);
        let mut s = StepModel::new(&m, g, &wl, &eff, 4096).expect("model");
        let padded = s.token_ops(256, Phase::Decode, false);
        s.checkpoint_shapes();
        let plain = s.token_ops(256, Phase::Decode, false);
        assert!(padded > plain && padded < plain * r1, "{padded} {plain}");
        let q = model("Qwen__Qwen3-8B");
        let s = StepModel::new(&q, g, &wl, &eff, 4096).expect("model");
        assert_eq!(s.expert_scale, 1.0);
        assert_eq!(s.expert_compute, 1.0);
        // The Marlin-on-Hopper compute factor: H100 yes, A100 (Marlin's own generation) no.
        let k = |gpu: &str| {
            StepModel::new(&m, cat.get(gpu).expect("gpu"), &wl, &eff, 4096)
                .expect("model")
                .expert_compute
        };
        assert_eq!(k("h100-sxm"), FIT_MARLIN_HOPPER_MOE_COMPUTE);
        assert_eq!(k("a100-sxm-80gb"), 1.0);
        let with = |gpu: &str, f: f64| {
            StepModel::new(&m, cat.get(gpu).expect("gpu"), &wl, &eff, 4096)
                .expect("model")
                .with_marlin_hopper_moe_compute(f)
                .expert_compute
        };
        assert_eq!(with("h100-sxm", 0.5), 0.5);
        assert_eq!(with("a100-sxm-80gb", 0.5), 1.0);
        // A custom accelerator with an H100's figures and name: its architecture is unknown,
        // so no Hopper factor (the stated default), whatever its name says.
        let custom = crate::hardware::CustomAccelerator {
            name: "NVIDIA H100 SXM (mine)".into(),
            memory_gib: 79.6,
            bandwidth_gbps: 3350.0,
            bf16_tflops: 989.5,
            fp8_tflops: Some(1979.0),
            price_usd_per_hour: None,
            tdp_w: None,
        }
        .validate()
        .expect("custom");
        assert_eq!(custom.architecture, Architecture::Unknown);
        let s = StepModel::new(&m, &custom, &wl, &eff, 4096).expect("model");
        assert_eq!(s.expert_compute, 1.0);
        assert_eq!(k("h100-sxm"), FIT_MARLIN_HOPPER_MOE_COMPUTE);
    }
}
