//! The analytic saturation estimate the sweep's rates are fractions of: one engine's, or
//! disaggregated pools' ([`analytic_capacity`], [`analytic_capacity_disagg`]).

use crate::base::error::CalcError;
use crate::hardware::catalog::Accelerator;
use crate::model::ModelDesc;
use crate::scenario::Scenario;
use crate::sim::config::EngineConfig;
use crate::sim::disagg::DisaggConfig;
use crate::sim::engine_step_model;
use crate::sim::workload::{Lengths, WorkloadSpec};

/// Mean prompt and output lengths of a length distribution, tokens.
fn mean_lengths(l: &Lengths) -> (f64, f64) {
    match l {
        Lengths::Fixed { input, output } => (*input as f64, *output as f64),
        Lengths::Uniform { input, output } => (
            (input.0 + input.1) as f64 / 2.0,
            (output.0 + output.1) as f64 / 2.0,
        ),
        Lengths::ShareGpt => (217.0, 202.0),
        Lengths::List { pairs } => {
            let n = pairs.len().max(1) as f64;
            (
                pairs.iter().map(|p| p.0 as f64).sum::<f64>() / n,
                pairs.iter().map(|p| p.1 as f64).sum::<f64>() / n,
            )
        }
    }
}

/// The analytic estimate's parts for one engine: a full batch (one unit's), the units with
/// clients, the mean decode context, the mean output length, one decode step's time at that
/// batch and one prompt's prefill time (seconds).
struct CapacityParts {
    batch: u64,
    units: u64,
    ctx: u64,
    o: f64,
    t_decode: f64,
    t_prefill: f64,
}

fn capacity_parts(
    model: &ModelDesc,
    gpu: &Accelerator,
    engine: &EngineConfig,
    s: &Scenario,
    wl: &WorkloadSpec,
) -> Result<CapacityParts, CalcError> {
    let r = engine.resolve(model, gpu)?;
    let (i, o) = mean_lengths(&wl.lengths);
    let tokens = (i + o).ceil().max(1.0) as u64;
    let per_request: u64 = r
        .groups
        .iter()
        .map(|g| {
            g.count.saturating_mul(g.blocks(
                tokens,
                tokens.min(r.max_num_batched_tokens),
                r.block_size,
            ))
        })
        .fold(0, u64::saturating_add)
        .max(1);
    let par = engine.parallel();
    // The units that have clients, and the attention-DP ranks whose tokens meet in each MoE
    // layer, as the simulator counts them (`sim::replica`).
    let units = wl
        .max_concurrency
        .map_or(par.units(), |c| par.busy_units(c));
    let mut batch = r.max_num_seqs.min(r.usable_blocks() / per_request).max(1);
    if let Some(c) = wl.max_concurrency {
        batch = batch.min(c.div_ceil(units).max(1));
    }
    let mut steps = engine_step_model(model, gpu, engine, &s.views.eff, &r)?;
    steps.set_active_ranks(par.busy_ranks(wl.max_concurrency));
    let ctx = (i + o / 2.0).ceil().max(1.0) as u64;
    steps.begin();
    for _ in 0..batch {
        steps.add_decode(ctx);
    }
    let t_decode = steps.finish(batch, batch);
    let prompt = (i * (1.0 - engine.prefix_hit)).ceil().max(1.0) as u64;
    steps.begin();
    steps.add_prefill(0, prompt);
    let t_prefill = steps.finish(prompt, 1) - s.views.eff.prefill_overhead_s;
    Ok(CapacityParts {
        batch,
        units,
        ctx,
        o,
        t_decode,
        t_prefill: t_prefill.max(0.0),
    })
}

/// The analytic saturation estimate, req/s: a full batch of `B` requests (the fewest of
/// `max_num_seqs`, the requests whose KV blocks fit, and the clients) each needs `O` decode
/// steps at the mean context and its prompt's prefill: `B / (O·t_decode(B) + B·t_prefill(I))`.
/// Also returns the decode step's batch, context and time (seconds) for "Show the math".
/// Under attention DP or pipeline stages the batch is one unit's (`core::sim::parallel`) and
/// the rate the instance's (the units' with clients together).
pub fn analytic_capacity(
    model: &ModelDesc,
    gpu: &Accelerator,
    engine: &EngineConfig,
    s: &Scenario,
    wl: &WorkloadSpec,
) -> Result<(f64, (u64, u64, f64)), CalcError> {
    let CapacityParts {
        batch,
        units,
        ctx,
        o,
        t_decode,
        t_prefill,
    } = capacity_parts(model, gpu, engine, s, wl)?;
    let per_round = o * t_decode + batch as f64 * t_prefill;
    let rate = if per_round > 0.0 {
        (batch * units) as f64 / per_round
    } else {
        1.0
    };
    Ok((rate.max(1e-3), (batch, ctx, t_decode)))
}

/// The analytic saturation estimate of disaggregated pools, req/s: the slower of the prefill
/// pool (`P` workers of `u_p` units, one prompt each at a time: `P·u_p / t_prefill(I)`) and
/// the decode pool (`D` workers of `u_d` units, a full batch `B` each for `O` steps:
/// `D·u_d·B / (O·t_decode(B))`), the clients shared out over each pool's workers. Also the
/// decode pool's step as [`analytic_capacity`] returns it.
pub fn analytic_capacity_disagg(
    model: &ModelDesc,
    gpu: &Accelerator,
    (prefill, decode, cfg): (&EngineConfig, &EngineConfig, &DisaggConfig),
    s: &Scenario,
    wl: &WorkloadSpec,
) -> Result<(f64, (u64, u64, f64)), CalcError> {
    let share = |workers: u64| WorkloadSpec {
        max_concurrency: wl.max_concurrency.map(|c| c.div_ceil(workers.max(1))),
        ..wl.clone()
    };
    let p = capacity_parts(model, gpu, prefill, s, &share(cfg.prefill_workers))?;
    let d = capacity_parts(model, gpu, decode, s, &share(cfg.decode_workers))?;
    let rate_p = if p.t_prefill > 0.0 {
        cfg.prefill_workers as f64 * p.units as f64 / p.t_prefill
    } else {
        f64::INFINITY
    };
    let per_round = d.o * d.t_decode;
    let rate_d = if per_round > 0.0 {
        cfg.decode_workers as f64 * (d.units * d.batch) as f64 / per_round
    } else {
        f64::INFINITY
    };
    let rate = rate_p.min(rate_d);
    let rate = if rate.is_finite() { rate } else { 1.0 };
    Ok((rate.max(1e-3), (d.batch, d.ctx, d.t_decode)))
}
