//! One replica ready to run workloads ([`Replica`]) and the one-call entry point
//! ([`simulate`]): resolve the engine, build the step model, generate the requests, check
//! they fit, run the scheduler, assemble the statistics.

use crate::base::error::{CalcError, Phrase};
use crate::calc::perf::Efficiencies;
use crate::hardware::Accelerator;
use crate::model::ModelDesc;
use crate::sim::config::{Budget, EngineConfig, SimConfig, Slo, StepModelKind};
use crate::sim::engines::EngineKind;
use crate::sim::kernel_step::{vllm_graph_tokens, StepOverhead};
use crate::sim::parallel::Parallel;
use crate::sim::resolved::Resolved;
use crate::sim::result::{EngineUsed, SimNote, SimResult};
use crate::sim::scheduler::{Engine, Outcome, StepCache};
use crate::sim::spec::SpecMethod;
use crate::sim::stats::{dist, dist_weighted};
use crate::sim::step_time::StepModel;
use crate::sim::workload::{Arrival, Request, WorkloadSpec, MAX_REQUESTS};

/// The clients of `wl` when they ran in lockstep ([`SimNote::Lockstep`]): more than one
/// client (`max_concurrency`), at least a round of requests that waited for a client
/// (`client_sends`: sent the moment one freed up, so the clients ran closed-loop, whatever the
/// arrival process), and every request the same prompt and output lengths.
fn lockstep_clients(wl: &WorkloadSpec, reqs: &[Request], client_sends: u64) -> Option<u64> {
    let clients = wl.max_concurrency.filter(|&c| c >= 2)?;
    let first = reqs.first()?;
    let alike = reqs
        .iter()
        .all(|q| q.input == first.input && q.output == first.output);
    (client_sends >= clients && alike).then_some(clients)
}

/// One replica ready to run workloads: the resolved engine and its step model, built once
/// and reused by every run (the rates of a sweep, say).
#[derive(Debug, Clone)]
pub struct Replica {
    resolved: Resolved,
    steps: StepModel,
    /// Measured kernels were asked for (the default) but cover neither this GPU nor its
    /// architecture, or not this model's mixer: the fitted roofline times the steps.
    roofline_fallback: bool,
    /// vLLM's asynchronous scheduling: two steps in flight ([`Engine::pipelined`]).
    pipelined: bool,
    /// Decode-only step times already computed by `steps` (kept across runs).
    cache: StepCache,
    /// The instance's parallelism: one of its `dp × pp` symmetric units is simulated
    /// (`sim::parallel`).
    par: Parallel,
    /// The shape goes beyond tensor parallelism in one node (`Parallel::beyond_tp`): the
    /// result carries it.
    beyond_tp: bool,
}

/// The step model that times `engine`'s steps for `model` on `gpu` with its knobs resolved
/// as `resolved`: the one home of its parts (parallelism, the engine's time per step, vLLM's
/// own MoE kernels, the roofline when asked), for the simulator and the analytic capacity.
pub fn engine_step_model(
    model: &ModelDesc,
    gpu: &Accelerator,
    engine: &EngineConfig,
    eff: &Efficiencies,
    resolved: &Resolved,
) -> Result<StepModel, CalcError> {
    let steps = StepModel::new(
        model,
        gpu,
        &engine.perf_workload(),
        eff,
        resolved.max_model_len,
    )?
    .with_parallel(engine.parallel(), gpu)
    .with_step_overhead(step_overhead(engine, resolved))
    .for_vllm(engine.engine == EngineKind::Vllm);
    Ok(match engine.step_model {
        StepModelKind::Kernels => steps,
        StepModelKind::Roofline => steps.roofline_only(),
    })
}

impl Replica {
    /// Resolves the engine's knobs and KV blocks for `model` on `gpu` and builds the step
    /// model.
    pub fn new(
        model: &ModelDesc,
        gpu: &Accelerator,
        engine: &EngineConfig,
        eff: &Efficiencies,
    ) -> Result<Replica, CalcError> {
        // MTP drafts with the checkpoint's own module: vLLM loads it (its weights and its
        // attention's KV then take memory).
        let with_mtp;
        let model = match engine.spec {
            Some(s) if s.method == SpecMethod::Mtp => {
                if model.mtp_layers.is_empty() {
                    return Err(CalcError::BadValue {
                        key: "spec_method".into(),
                        found: Phrase::verbatim("mtp"),
                        expected: Phrase::tr("exp_spec_mtp"),
                    });
                }
                with_mtp = ModelDesc {
                    load_mtp: true,
                    ..model.clone()
                };
                &with_mtp
            }
            _ => model,
        };
        let resolved = engine.resolve(model, gpu)?;
        let overlapped = overlapped(engine, &resolved);
        if resolved.usable_blocks() == 0 {
            return Err(CalcError::BadValue {
                key: "num_gpu_blocks".into(),
                found: Phrase::verbatim("0"),
                expected: Phrase::tr("exp_sim_kv_blocks"),
            });
        }
        let steps = engine_step_model(model, gpu, engine, eff, &resolved)?;
        let roofline_fallback =
            engine.step_model == StepModelKind::Kernels && steps.kernel().is_none();
        Ok(Replica {
            resolved,
            steps,
            roofline_fallback,
            pipelined: overlapped,
            cache: StepCache::default(),
            par: {
                let p = engine.parallel();
                Parallel {
                    nodes: p.nodes_for(gpu),
                    ..p
                }
            },
            beyond_tp: engine.parallel().beyond_tp(gpu),
        })
    }

    /// The same replica with the Marlin-on-Hopper compute factor `k` in place of the fitted
    /// constant (`StepModel::with_marlin_hopper_moe_compute`; the step times computed so far
    /// are dropped): the fit of that constant passes its trial values through this.
    pub fn with_marlin_hopper_moe_compute(self, k: f64) -> Replica {
        self.map_steps(|s| s.with_marlin_hopper_moe_compute(k))
    }

    /// The same replica with a per-request time per step (`StepModel::with_per_sequence_cost`;
    /// the step times computed so far are dropped): a sensitivity of the validation only.
    pub fn with_per_sequence_cost(self, seconds: f64, per_rank: bool) -> Replica {
        self.map_steps(|s| s.with_per_sequence_cost(seconds, per_rank))
    }

    /// The same replica with the engine's time per step beyond its kernels set to `o`
    /// (measured-kernel step model only; the step times computed so far are dropped).
    pub fn with_step_overhead(self, o: StepOverhead) -> Replica {
        self.map_steps(|s| s.with_step_overhead(o))
    }

    /// The engine's time per step beyond its kernels (measured-kernel step model only).
    pub fn step_overhead(&self) -> Option<StepOverhead> {
        self.steps.kernel().map(|k| k.overhead())
    }

    /// The same replica with its step model changed by `f`; the step times computed so far
    /// are dropped.
    fn map_steps(self, f: impl FnOnce(StepModel) -> StepModel) -> Replica {
        Replica {
            resolved: self.resolved,
            steps: f(self.steps),
            roofline_fallback: self.roofline_fallback,
            pipelined: self.pipelined,
            cache: StepCache::default(),
            par: self.par,
            beyond_tp: self.beyond_tp,
        }
    }

    /// The engine figures in use.
    pub fn resolved(&self) -> &Resolved {
        &self.resolved
    }

    /// Whether its engine schedules asynchronously ([`Engine::pipelined`]).
    pub(crate) fn pipelined(&self) -> bool {
        self.pipelined
    }

    /// The instance's parallelism.
    pub fn parallel(&self) -> Parallel {
        self.par
    }

    /// The symmetric units one instance runs as (`dp × pp`: `sim::parallel`).
    pub(crate) fn units(&self) -> u64 {
        self.par.units()
    }

    /// The step model (the time of one engine step; a fleet clones one per replica).
    pub fn step_model(&self) -> &StepModel {
        &self.steps
    }

    /// Simulates one benchmark of `wl`.
    pub fn run(
        &mut self,
        wl: &WorkloadSpec,
        slo: Option<Slo>,
        budget: Budget,
    ) -> Result<SimResult, CalcError> {
        let (unit_wl, active) = unit_workload(wl, self.par);
        if self
            .steps
            .set_active_ranks(self.par.busy_ranks(wl.max_concurrency))
        {
            self.cache = StepCache::default();
        }
        let wl = &unit_wl;
        let generated = wl.generate()?;
        self.check_lengths(&generated.requests)?;
        let mut notes = self.run_notes(generated.capped_from);
        if active > 1 || self.par.units() > 1 {
            notes.push(SimNote::Parallel {
                units: self.par.units(),
                active,
            });
        }
        // The lockstep note's factor was measured on the roofline step model; on the
        // measured-kernel one fixed-length clients form the waves measured runs show
        // (`tests/serving_clients.rs`), so the note is not given.
        let on_roofline = self.steps.kernel().is_none();
        let resolved = self.resolved.clone();
        let mut engine = Engine::new(
            &resolved,
            &mut self.steps,
            &generated.requests,
            wl.max_concurrency,
            wl.warmup,
        )
        .drain_warmup(wl.warmup, wl.warmup_drained)
        .pipelined(self.pipelined);
        engine.set_cache(std::mem::take(&mut self.cache));
        let ran = engine.run(&budget);
        self.cache = engine.take_cache();
        ran?;
        let outcome = engine.outcome();
        if let Some(clients) =
            lockstep_clients(wl, &generated.requests, outcome.client_sends).filter(|_| on_roofline)
        {
            notes.push(SimNote::Lockstep { clients });
        }
        if outcome.partial {
            notes.push(SimNote::Partial {
                steps: outcome.steps,
            });
        }
        let mut res = assemble(outcome, &resolved, slo, notes);
        scale_units(&mut res, active);
        res.engine.parallel = self.beyond_tp.then_some(self.par);
        Ok(res)
    }

    /// The notes every run of this replica carries (the performance model's), and the cap
    /// on the request count when one was applied.
    pub(crate) fn run_notes(&self, capped_from: Option<u64>) -> Vec<SimNote> {
        let mut notes: Vec<SimNote> = self
            .steps
            .notes()
            .iter()
            .cloned()
            .map(|note| SimNote::Perf { note })
            .collect();
        if let Some(k) = self.steps.kernel() {
            let (table, vllm) = k.table();
            notes.insert(
                0,
                SimNote::Kernels {
                    table: table.to_string(),
                    vllm: vllm.to_string(),
                    sibling: k.source() == crate::hardware::KernelSource::Sibling,
                    step_ms: k.overhead().fixed * 1e3,
                },
            );
            let o = k.overhead();
            if o.eager_per_layer > 0.0 && self.resolved.max_num_batched_tokens > o.graph_tokens {
                notes.insert(
                    1,
                    SimNote::EagerSteps {
                        graph_tokens: o.graph_tokens,
                        per_layer_ms: o.eager_per_layer * 1e3,
                        step_ms: o.eager_per_layer * k.stage_layers() * 1e3,
                    },
                );
            }
        }
        let engine = self.resolved.policy.engine();
        if engine != EngineKind::Vllm {
            notes.insert(0, SimNote::Engine { engine });
        }
        if let Some(sp) = self.resolved.spec {
            notes.push(SimNote::Spec {
                method: sp.method.name().to_string(),
                k: sp.k,
                length: sp.mean_accepted_length(),
            });
        }
        if self.resolved.max_model_len_assumed {
            notes.push(SimNote::MaxModelLenAssumed {
                len: self.resolved.max_model_len,
            });
        }
        if let Some(derived) = &self.resolved.max_model_len_derived {
            notes.push(SimNote::MaxModelLenDerived {
                derived: derived.clone(),
            });
        }
        if self.roofline_fallback {
            notes.push(SimNote::RooflineFallback);
        }
        if let Some(asked) = capped_from {
            notes.push(SimNote::RequestsCapped {
                asked,
                cap: MAX_REQUESTS,
            });
        }
        notes
    }

    /// Every request must fit the context and the KV cache on its own.
    pub(crate) fn check_lengths(&self, reqs: &[Request]) -> Result<(), CalcError> {
        let r = &self.resolved;
        let cap_tokens = token_cap(r);
        if let Some(q) = reqs.iter().find(|q| q.input + q.output > cap_tokens) {
            return Err(CalcError::range_error(
                Phrase::verbatim("input_len + output_len"),
                q.input + q.output,
                Phrase::tr("rng_sim_context")
                    .val("max", cap_tokens)
                    .val("len", r.max_model_len),
            ));
        }
        Ok(())
    }
}

/// Whether the engine's CPU work per step overlaps the GPU's (asynchronous scheduling; SGLang
/// turns its overlap scheduler off for EAGLE-style speculative decoding, `server_args.py`:
/// "Overlap scheduler is disabled because of using eagle speculative decoding", and for a
/// hybrid model with its radix cache on, `_handle_mamba_radix_cache`: "mamba no_buffer is
/// not compatible with overlap schedule").
fn overlapped(engine: &EngineConfig, r: &Resolved) -> bool {
    let sglang = engine.engine == EngineKind::Sglang;
    let hybrid_radix =
        r.pool.is_some_and(|p| p.state_slots > 0) && !engine.sglang_state.disable_radix_cache;
    engine.async_scheduling && !(sglang && (engine.spec.is_some() || hybrid_radix))
}

/// The engine's time per step beyond its kernels: the fitted time per step, and under vLLM the
/// CPU time per layer of a step larger than its largest CUDA graph (at its resolved
/// `max_num_seqs`). SGLang and TensorRT-LLM run their prefills without graphs too, at costs
/// not fitted here: their steps keep the time per step alone.
fn step_overhead(engine: &EngineConfig, r: &Resolved) -> StepOverhead {
    let o = StepOverhead::fitted(overlapped(engine, r));
    if engine.engine == EngineKind::Vllm {
        o.with_eager_steps(vllm_graph_tokens(
            engine.max_cudagraph_capture_size,
            r.max_num_seqs,
        ))
    } else {
        o
    }
}

/// The longest request (tokens) the context and the KV cache admit on their own: at most
/// `max_model_len`, and the blocks of every group for it (its last step computing one
/// `max_num_batched_tokens` chunk) within the pool. Blocks grow with the length, so a binary
/// search finds it.
fn token_cap(r: &Resolved) -> u64 {
    let blocks = |t: u64| -> u64 {
        let new = t.min(r.max_num_batched_tokens);
        r.groups
            .iter()
            .map(|g| g.count.saturating_mul(g.blocks(t, new, r.block_size)))
            .fold(0u64, u64::saturating_add)
    };
    let (mut lo, mut hi) = (0u64, r.max_model_len);
    while lo < hi {
        let mid = lo + (hi - lo).div_ceil(2);
        if blocks(mid) <= r.usable_blocks() {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    lo
}

/// One symmetric unit's share of `wl` under parallelism `p` (`sim::parallel`), and the units
/// that have requests: the clients (or the rate, or the requests) split over at most
/// `dp × pp` units, each unit's share rounded up.
pub(crate) fn unit_workload(wl: &WorkloadSpec, p: Parallel) -> (WorkloadSpec, u64) {
    let units = p.units();
    if units <= 1 {
        return (wl.clone(), 1);
    }
    let active = p.busy_units(wl.max_concurrency.unwrap_or(wl.num_requests));
    let mut w = wl.clone();
    w.max_concurrency = wl.max_concurrency.map(|c| c.div_ceil(active));
    w.num_requests = wl.num_requests.div_ceil(active).max(1);
    w.warmup = wl
        .warmup
        .div_ceil(active)
        .min(w.num_requests.saturating_sub(1));
    let k = active as f64;
    w.arrival = match wl.arrival {
        Arrival::Poisson { rate } => Arrival::Poisson { rate: rate / k },
        Arrival::Gamma { rate, burstiness } => Arrival::Gamma {
            rate: rate / k,
            burstiness,
        },
        Arrival::AllAtOnce => Arrival::AllAtOnce,
    };
    (w, active)
}

/// The instance's figures from one unit's: counts and throughputs times the `active` units.
fn scale_units(r: &mut SimResult, active: u64) {
    if active <= 1 {
        return;
    }
    let k = active as f64;
    r.num_prompts = r.num_prompts.saturating_mul(active);
    r.completed = r.completed.saturating_mul(active);
    r.total_input_tokens = r.total_input_tokens.saturating_mul(active);
    r.total_output_tokens = r.total_output_tokens.saturating_mul(active);
    r.request_throughput *= k;
    r.output_throughput *= k;
    r.total_token_throughput *= k;
    r.request_goodput = r.request_goodput.map(|g| g * k);
}

/// Simulates `cfg` for `model` on `gpu` (a [`Replica`] built and run once).
pub fn simulate(
    model: &ModelDesc,
    gpu: &Accelerator,
    cfg: &SimConfig,
) -> Result<SimResult, CalcError> {
    let mut rep = Replica::new(model, gpu, &cfg.engine, &cfg.efficiencies)?;
    rep.run(&cfg.workload, cfg.slo, cfg.budget)
}

/// The statistics of a run (one engine's outcome or a fleet's pooled one).
pub(crate) fn assemble(
    mut o: Outcome,
    resolved: &Resolved,
    slo: Option<Slo>,
    notes: Vec<SimNote>,
) -> SimResult {
    let partial = o.partial;
    let c = &mut o.collector;
    let completed = c.ttft_ms.len() as u64;
    let end = if partial { o.now } else { c.last_done_s };
    let duration = if o.first_send_s.is_finite() {
        (end - o.first_send_s).max(0.0)
    } else {
        0.0
    };
    let per_s = |x: f64| if duration > 0.0 { x / duration } else { 0.0 };
    let good = slo.map(|s| {
        c.per_request
            .iter()
            .filter(|(ttft, tpot)| *ttft <= s.ttft_ms && *tpot <= s.tpot_ms)
            .count() as f64
    });
    SimResult {
        num_prompts: o.num_prompts,
        completed,
        partial,
        duration_s: duration,
        total_input_tokens: c.input_tokens,
        total_output_tokens: c.output_tokens,
        request_throughput: per_s(completed as f64),
        output_throughput: per_s(c.output_tokens as f64),
        total_token_throughput: per_s((c.input_tokens + c.output_tokens) as f64),
        request_goodput: good.map(per_s),
        goodput: good.map(|g| {
            if completed > 0 {
                g / completed as f64
            } else {
                0.0
            }
        }),
        ttft_ms: dist(&c.ttft_ms),
        tpot_ms: dist(&c.tpot_ms),
        itl_ms: dist_weighted(&mut c.itl_ms),
        e2el_ms: dist(&c.e2el_ms),
        queue_ms: dist(&c.queue_ms),
        frontend_ms: dist(&c.frontend_ms),
        prefill_ms: dist(&c.prefill_ms),
        preemptions: o.preemptions,
        steps: o.steps,
        mean_batch: if c.steps > 0 {
            c.batch_sum / c.steps as f64
        } else {
            0.0
        },
        max_batch: c.max_batch,
        peak_kv_occupancy: c.max_blocks_used as f64 / resolved.usable_blocks().max(1) as f64,
        running_at_end: o.running,
        waiting_at_end: o.waiting,
        not_sent_at_end: o.not_sent,
        completed_all: o.completed_all,
        generated: o.generated,
        series: std::mem::take(&mut o.series),
        engine: EngineUsed {
            max_num_seqs: resolved.max_num_seqs,
            max_num_batched_tokens: resolved.max_num_batched_tokens,
            block_size: resolved.block_size,
            max_model_len: resolved.max_model_len,
            num_gpu_blocks: resolved.num_gpu_blocks,
            engine: resolved.policy.engine(),
            parallel: None,
        },
        notes,
        disagg: None,
    }
}
