//! The screen: each candidate timed in closed form from the same step model the simulator
//! uses, so that a thousand configurations cost milliseconds and only a short list is
//! simulated.
//!
//! One engine instance (a [`Profile`]) at a decode batch of `B` requests per unit, prompts of
//! `I` tokens, answers of `O` tokens, `L` tokens gained per decode step (1, or a speculative
//! method's mean accepted length), `u` units (`dp × pp`):
//!
//! ```text
//! decode step    t_d(B) = step(B decodes at context I + O/2, B·(1 + k) tokens) + k drafter passes
//! prefill        t_p    = step(one prompt of I tokens)
//! aggregated     round = (O / L)·t_d(B) + B·t_p      capacity = u·B / round     TPOT = round / O
//!                TTFT  = server path + t_p + t_d(B)
//! disaggregated  capacity = min(x·u_p / t_p, y·u_d·B·L / (O·t_d(B)))     TPOT = t_d(B) / L
//!                TTFT  = server path + t_p + KV bytes / link + hand-off + t_d(B)
//! ```
//!
//! These are means at a full batch; the short list's simulations give the P99s.

use crate::base::error::CalcError;
use crate::calc::perf::Efficiencies;
use crate::hardware::Accelerator;
use crate::model::ModelDesc;
use crate::sim::config::EngineConfig;
use crate::sim::disagg::kv_bytes_per_gpu;
use crate::sim::replica::Replica;

/// Largest decode batch per unit the screen tries.
pub const MAX_SCREEN_BATCH: u64 = 1024;

/// One engine instance timed in closed form.
#[derive(Debug, Clone)]
pub struct Profile {
    /// The replica (kept for the simulations of the short list).
    pub replica: Replica,
    /// Units (`dp × pp`) of the instance.
    pub units: f64,
    /// Most requests one unit holds at once (its seats, and its KV blocks at `I + O` tokens).
    pub max_batch: u64,
    /// One prompt's prefill, seconds.
    pub t_prefill: f64,
    /// Decode steps by batch per unit (powers of two and the largest), seconds.
    pub decode: Vec<(u64, f64)>,
    /// Tokens a decoding request gains per step.
    pub accepted: f64,
    /// The server's path per request, seconds.
    pub frontend_s: f64,
    /// KV bytes one GPU holds for a prompt (what a disaggregated hand-off moves).
    pub kv_bytes: f64,
}

/// Blocks one request of `tokens` tokens holds in `rep`'s cache.
fn blocks_per_request(rep: &Replica, tokens: u64) -> u64 {
    let r = rep.resolved();
    r.groups
        .iter()
        .map(|g| g.count.saturating_mul(g.blocks(tokens, 0, r.block_size)))
        .sum()
}

impl Profile {
    /// Builds the replica of `engine` for `model` on `gpu` and times its steps for prompts of
    /// `input` and answers of `output` tokens. An error: the instance cannot start (the
    /// weights leave no KV, a rule of the shape), or holds no request of this length.
    pub fn new(
        model: &ModelDesc,
        gpu: &Accelerator,
        engine: &EngineConfig,
        eff: &Efficiencies,
        (input, output): (u64, u64),
    ) -> Result<Profile, CalcError> {
        let replica = Replica::new(model, gpu, engine, eff)?;
        replica.check_lengths(&[crate::sim::workload::Request {
            ready_s: 0.0,
            input,
            output,
        }])?;
        let r = replica.resolved();
        let per_req = blocks_per_request(&replica, input + output).max(1);
        let max_batch = (r.usable_blocks() / per_req)
            .min(r.max_num_seqs)
            .min(MAX_SCREEN_BATCH);
        let par = replica.parallel();
        let mut m = replica.step_model().clone();
        m.set_active_ranks(par.dp.max(1));
        let spec = engine.spec;
        let k = spec.map_or(0, |s| s.k);
        let ctx = input + output / 2;
        let mut decode = Vec::new();
        let mut b = 1u64;
        while b <= max_batch {
            decode.push((b, 0.0));
            if b == max_batch {
                break;
            }
            b = (b * 2).min(max_batch);
        }
        for (b, t) in &mut decode {
            m.begin();
            if m.full_attention() {
                m.add_decodes(*b, b.saturating_mul(ctx));
            } else {
                for _ in 0..*b {
                    m.add_decode(ctx);
                }
            }
            let tokens = b.saturating_mul(1 + k);
            *t = m.finish(tokens, tokens);
            if let Some(s) = spec {
                let layers = s.method.draft_layers();
                if layers > 0.0 {
                    *t += s.k as f64 * layers * m.draft_pass_s(*b);
                }
            }
        }
        m.begin();
        m.add_prefill(0, input);
        let t_prefill = m.finish(input, 1);
        let kv_bytes = kv_bytes_per_gpu(&replica, input);
        let frontend_s = r.frontend_overhead_s + r.frontend_per_token_s * input as f64;
        Ok(Profile {
            units: par.units() as f64,
            max_batch,
            t_prefill,
            decode,
            accepted: spec.map_or(1.0, |s| s.mean_accepted_length()),
            frontend_s,
            kv_bytes,
            replica,
        })
    }

    /// GPUs of the instance.
    pub fn gpus(&self) -> u64 {
        self.replica.parallel().gpus()
    }
}

/// One operating point in closed form: capacity (requests per second of one deployment) and
/// mean TTFT and TPOT, seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    /// Decode batch per unit.
    pub batch: u64,
    /// Requests per second one deployment sustains at this batch.
    pub capacity: f64,
    /// Mean time to first token, seconds.
    pub ttft_s: f64,
    /// Mean time per output token, seconds.
    pub tpot_s: f64,
}

/// The aggregated instance at each of its batches (module docs).
pub fn aggregated(p: &Profile, output: u64) -> Vec<Estimate> {
    let o = output.max(1) as f64;
    p.decode
        .iter()
        .map(|&(b, t_d)| {
            let round = (o / p.accepted) * t_d + b as f64 * p.t_prefill;
            Estimate {
                batch: b,
                capacity: p.units * b as f64 / round.max(1e-12),
                ttft_s: p.frontend_s + p.t_prefill + t_d,
                tpot_s: round / o,
            }
        })
        .collect()
}

/// A disaggregated deployment of `x` prefill workers of `pre` and `y` decode workers of
/// `dec`, the KV crossing a link of `bytes_per_s` with a fixed `handoff_s`, at each decode
/// batch (module docs).
pub fn disaggregated(
    pre: &Profile,
    dec: &Profile,
    (x, y): (u64, u64),
    (bytes_per_s, handoff_s): (f64, f64),
    output: u64,
) -> Vec<Estimate> {
    let o = output.max(1) as f64;
    let cap_p = x as f64 * pre.units / pre.t_prefill.max(1e-12);
    let transfer = pre.kv_bytes / bytes_per_s.max(1.0) + handoff_s;
    dec.decode
        .iter()
        .map(|&(b, t_d)| {
            let cap_d = y as f64 * dec.units * b as f64 * dec.accepted / (o * t_d.max(1e-12));
            Estimate {
                batch: b,
                capacity: cap_p.min(cap_d),
                ttft_s: pre.frontend_s + pre.t_prefill + transfer + t_d,
                tpot_s: t_d / dec.accepted,
            }
        })
        .collect()
}
