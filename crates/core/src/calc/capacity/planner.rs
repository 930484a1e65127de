//! The planner: for each candidate and TP degree inside a node, the batch memory allows
//! (`floor((capacity × util − W/tp) / KV per sequence)`), the largest batch `B*` meeting the
//! targets (binary search), requests/s per replica by Little's law (`B* / e2e`), replicas
//! `ceil(rate / per-replica rate)` for the average and the peak, GPUs, cost (`GPUs × price`, per
//! month `× 730 h`) and headroom; then the ranking and, when nothing qualifies, the error that
//! says why.

use super::answer::{Plan, PlanOption, Reason, HOURS_PER_MONTH};
use super::derivation::plan_derivations;
use super::timing::{PerfTiming, StepParts, StepTimes, Timing};
use super::traffic::{PlanInputs, Targets, Traffic};
use crate::base::dtype::Dtype;
use crate::base::error::{CalcError, Phrase};
use crate::base::units::{fmt_sig, usd_per_million_tokens, Seconds};
use crate::calc::perf::Efficiencies;
use crate::hardware::catalog::{Accelerator, Catalog, Topology};
use crate::model::ModelDesc;

/// Largest TP degree tried inside a node (the chapter: a node holds up to 8 GPUs).
pub const MAX_TP_IN_NODE: u64 = 8;
/// Largest TP degree tried for a replica that crosses nodes (to say how many it would need).
pub const MAX_TP_ACROSS_NODES: u64 = 64;
/// Largest batch searched.
pub const MAX_BATCH: u64 = 1_000_000;
/// Accepted GPUs per node, inclusive: one standalone card up to an NVL72 rack (the largest
/// scale-up domain in the catalog).
pub const GPUS_PER_NODE_RANGE: (u32, u32) = (1, 72);

/// GPUs per node for an accelerator: its scale-up domain (8 for HGX and PCIe servers, 4 for
/// GeForce boxes, 72 for NVL72, 1 for a standalone chip); bridged cards (domain 2–4) sit in
/// 8-card PCIe servers, so 8.
pub fn default_gpus_per_node(gpu: &Accelerator) -> u32 {
    match gpu.interconnect.topology {
        Topology::Standalone => 1,
        Topology::Bridge => gpu.interconnect.domain_size.max(8),
        _ => gpu.interconnect.domain_size.max(1),
    }
}

/// Mixed-batch memory: the largest batch whose weights plus share-weighted mean KV fit.
fn max_batch(
    t: &dyn Timing,
    gpu: &Accelerator,
    tp: u64,
    traffic: &Traffic,
) -> Result<u64, CalcError> {
    let mut kv = 0.0;
    let mut need = None;
    for b in &traffic.buckets {
        let m = t.memory(gpu, tp, b.input_len, b.output_len)?;
        kv += b.share * m.kv_bytes_per_seq;
        need = Some(m);
    }
    let Some(m) = need else { return Ok(0) };
    let free = m.usable_bytes - m.weight_bytes;
    if !(free.is_finite() && free > 0.0) {
        return Ok(0);
    }
    if kv <= 0.0 {
        return Ok(MAX_BATCH);
    }
    Ok((free / kv).floor().clamp(0.0, MAX_BATCH as f64) as u64)
}

/// Mixed-batch step times: share-weighted means of the per-bucket TTFT and TPOT.
fn mixed_times(
    t: &dyn Timing,
    gpu: &Accelerator,
    tp: u64,
    batch: u64,
    traffic: &Traffic,
) -> Result<StepTimes, CalcError> {
    let (mut ttft, mut tpot) = (0.0, 0.0);
    let mut parts = Some(StepParts {
        prefill_one: Seconds(0.0),
        prefill_batch: Seconds(0.0),
        decode: Seconds(0.0),
    });
    for b in &traffic.buckets {
        let s = t.times(gpu, tp, batch, b.input_len, b.output_len)?;
        ttft += b.share * s.ttft.0;
        tpot += b.share * s.tpot.0;
        parts = parts.zip(s.parts).map(|(a, p)| StepParts {
            prefill_one: Seconds(a.prefill_one.0 + b.share * p.prefill_one.0),
            prefill_batch: Seconds(a.prefill_batch.0 + b.share * p.prefill_batch.0),
            decode: Seconds(a.decode.0 + b.share * p.decode.0),
        });
    }
    Ok(StepTimes {
        ttft: Seconds(ttft),
        tpot: Seconds(tpot),
        parts,
    })
}

fn meets(s: &StepTimes, t: &Targets) -> bool {
    s.ttft.0 <= t.ttft.0 && s.tpot.0 <= t.tpot.0
}

/// The largest batch in `1..=max_b` that meets the targets, by binary search (both times rise
/// with the batch), with its step times; `None` when batch 1 misses (its times are returned).
fn best_batch(
    t: &dyn Timing,
    gpu: &Accelerator,
    tp: u64,
    max_b: u64,
    traffic: &Traffic,
    targets: &Targets,
) -> Result<(Option<u64>, StepTimes), CalcError> {
    let one = mixed_times(t, gpu, tp, 1, traffic)?;
    if !meets(&one, targets) {
        return Ok((None, one));
    }
    let top = mixed_times(t, gpu, tp, max_b, traffic)?;
    if meets(&top, targets) {
        return Ok((Some(max_b), top));
    }
    // Invariant: lo meets, hi does not.
    let (mut lo, mut hi, mut lo_t) = (1u64, max_b, one);
    while hi - lo > 1 {
        let mid = lo + (hi - lo) / 2;
        let s = mixed_times(t, gpu, tp, mid, traffic)?;
        if meets(&s, targets) {
            lo = mid;
            lo_t = s;
        } else {
            hi = mid;
        }
    }
    Ok((Some(lo), lo_t))
}

pub(super) fn replicas_for(rate: f64, per_replica: f64) -> u64 {
    if !(per_replica.is_finite() && per_replica > 0.0) {
        return 0;
    }
    (rate / per_replica).ceil().clamp(1.0, 1e15) as u64
}

struct Row<'a> {
    gpu: &'a Accelerator,
    tp: u64,
    gpn: u32,
    price: Option<f64>,
    crosses: bool,
}

/// A row's option before any timing: identity, memory-bound batch cap and cold start, with
/// every timing, fleet and cost figure unset.
fn blank_option(r: &Row, t: &dyn Timing, max_b: u64) -> PlanOption {
    PlanOption {
        gpu: r.gpu.id.clone(),
        gpu_name: r.gpu.name.clone(),
        tp: r.tp,
        gpus_per_node: r.gpn,
        price_usd_per_gpu_hour: r.price,
        max_batch_memory: max_b,
        batch: 0,
        ttft: Seconds(f64::NAN),
        tpot: Seconds(f64::NAN),
        e2e: Seconds(f64::NAN),
        step_parts: None,
        batch_limited_by: "memory".into(),
        output_tokens_per_s_per_replica: 0.0,
        requests_per_s_per_replica: 0.0,
        concurrency_avg: 0.0,
        concurrency_peak: 0.0,
        replicas_avg: 0,
        replicas_peak: 0,
        gpus_avg: 0,
        gpus_peak: 0,
        nodes_peak: 0,
        cost_per_hour_avg: None,
        cost_per_hour_peak: None,
        cost_per_month_peak: None,
        cost_per_month_avg: None,
        usd_per_million_tokens_avg: None,
        headroom_avg: 0.0,
        headroom_peak: 0.0,
        cold_start: t.cold_start(r.gpu, r.tp),
        meets_targets: false,
        latency_lower_bound: None,
        reason: None,
        notes: Vec::new(),
    }
}

/// Marks an option whose batch 1 misses a target: the reason (which target, unless the row
/// crosses nodes), the limiting target and the note giving both times against their targets.
fn mark_missed(o: &mut PlanOption, r: &Row, s: &StepTimes, targets: &Targets) {
    let reason = if s.ttft.0 > targets.ttft.0 {
        Reason::MissesTtft
    } else {
        Reason::MissesTpot
    };
    o.reason = Some(if r.crosses {
        Reason::CrossesNodes
    } else {
        reason
    });
    o.batch_limited_by = if reason == Reason::MissesTtft {
        "ttft".into()
    } else {
        "tpot".into()
    };
    o.notes.push(
        Phrase::tr("phr_plan_at_batch_one")
            .val("ttft", fmt_sig(s.ttft.ms()))
            .val("ttft_target", fmt_sig(targets.ttft.ms()))
            .val("tpot", fmt_sig(s.tpot.ms()))
            .val("tpot_target", fmt_sig(targets.tpot.ms())),
    );
}

/// Fills the fleet of an option that meets the targets at batch `b`: per-replica throughput,
/// concurrency, replicas, GPUs and nodes at the average and peak rates, headroom and costs.
fn fill_fleet(o: &mut PlanOption, r: &Row, traffic: &Traffic, b: u64, mean_o: f64) {
    let e2e = o.e2e.0;
    let per = b as f64 / e2e;
    o.requests_per_s_per_replica = per;
    o.output_tokens_per_s_per_replica = b as f64 * mean_o / e2e;
    let (avg, peak) = (traffic.avg_rate_rps, traffic.peak_rate_rps());
    o.concurrency_avg = avg * e2e;
    o.concurrency_peak = peak * e2e;
    o.replicas_avg = replicas_for(avg, per);
    o.replicas_peak = replicas_for(peak, per);
    o.gpus_avg = o.replicas_avg.saturating_mul(r.tp);
    o.gpus_peak = o.replicas_peak.saturating_mul(r.tp);
    let gpn = u64::from(r.gpn.max(1));
    o.nodes_peak = if r.tp <= gpn {
        o.replicas_peak.div_ceil(gpn / r.tp)
    } else {
        o.replicas_peak.saturating_mul(r.tp.div_ceil(gpn))
    };
    o.headroom_avg = o.replicas_avg as f64 * per / avg - 1.0;
    o.headroom_peak = o.replicas_peak as f64 * per / peak - 1.0;
    if let Some(p) = r.price {
        o.cost_per_hour_avg = Some(o.gpus_avg as f64 * p);
        o.cost_per_hour_peak = Some(o.gpus_peak as f64 * p);
        o.cost_per_month_peak = Some(o.gpus_peak as f64 * p * HOURS_PER_MONTH);
        o.cost_per_month_avg = Some(o.gpus_avg as f64 * p * HOURS_PER_MONTH);
        // Dollars per hour at the average provisioning over output tokens per hour served.
        o.usd_per_million_tokens_avg = Some(usd_per_million_tokens(
            o.gpus_avg as f64 * p,
            avg * mean_o * 3600.0,
        ));
    }
}

/// One plan option for a row: the memory-bound batch, the largest batch meeting the targets,
/// its step times, and the fleet and costs it implies (or why the row fails).
fn option_row(r: &Row, t: &dyn Timing, inp: &PlanInputs) -> Result<PlanOption, CalcError> {
    let traffic = &inp.traffic;
    let (_, mean_o) = traffic.mean_lengths();
    let max_b = max_batch(t, r.gpu, r.tp, traffic)?;
    let mut o = blank_option(r, t, max_b);
    if r.crosses {
        o.notes.push(
            Phrase::tr("phr_plan_spans_nodes")
                .val("gpu", &r.gpu.name)
                .val("tp", r.tp)
                .val("nodes", r.tp.div_ceil(u64::from(r.gpn.max(1))))
                .val("gpn", r.gpn),
        );
    }
    if max_b == 0 {
        o.reason = Some(if r.crosses {
            Reason::CrossesNodes
        } else {
            Reason::DoesNotFit
        });
        o.notes.push(
            Phrase::tr("phr_plan_does_not_fit")
                .val("gpu", &r.gpu.name)
                .val("tp", r.tp),
        );
        return Ok(o);
    }
    let (batch, s) = best_batch(t, r.gpu, r.tp, max_b, traffic, &inp.targets)?;
    o.latency_lower_bound = t.lower_bound(r.gpu, r.tp);
    if let Some(lb) = o.latency_lower_bound {
        o.notes.push(lb.phrase(&r.gpu.name));
    }
    o.ttft = s.ttft;
    o.tpot = s.tpot;
    o.step_parts = s.parts;
    o.e2e = Seconds(s.ttft.0 + (mean_o - 1.0).max(0.0) * s.tpot.0);
    let Some(b) = batch else {
        mark_missed(&mut o, r, &s, &inp.targets);
        return Ok(o);
    };
    o.batch = b;
    o.meets_targets = true;
    o.batch_limited_by = if b == max_b {
        "memory".into()
    } else {
        let next = mixed_times(t, r.gpu, r.tp, b + 1, traffic)?;
        if next.tpot.0 > inp.targets.tpot.0 {
            "tpot".into()
        } else {
            "ttft".into()
        }
    };
    fill_fleet(&mut o, r, traffic, b, mean_o);
    if r.crosses {
        o.reason = Some(Reason::CrossesNodes);
    }
    Ok(o)
}

fn price_of(gpu: &Accelerator, given: Option<f64>) -> Result<Option<f64>, CalcError> {
    match given {
        Some(p) if !(p.is_finite() && (0.0..=1e6).contains(&p)) => Err(CalcError::out_of_range(
            Phrase::tr("fld_price").val("gpu", &gpu.name),
            p,
            Phrase::tr("rng_from_to")
                .val("lo", 0)
                .val("hi", "1,000,000"),
        )),
        Some(p) => Ok(Some(p)),
        None => Ok(gpu
            .price
            .as_ref()
            .map(|p| p.usd_per_hour)
            .filter(|p| p.is_finite() && *p >= 0.0)),
    }
}

/// When no TP degree inside a node fits the model: the row of the smallest TP beyond
/// `r.tp` (the node's largest) that fits, to say how many GPUs a replica would need.
fn cross_node_row(r: &Row, t: &dyn Timing, inp: &PlanInputs) -> Option<PlanOption> {
    let mut tp = (r.tp + 1).next_power_of_two();
    while tp <= MAX_TP_ACROSS_NODES {
        if t.check_tp(tp).is_ok() && max_batch(t, r.gpu, tp, &inp.traffic).unwrap_or(0) > 0 {
            return option_row(&Row { tp, ..*r }, t, inp).ok();
        }
        tp *= 2;
    }
    None
}

/// Every option row, ranked, without judging feasibility (the UI shows these next to an
/// error). Rows: viable options (meet the targets, inside one node) by cost at the peak, then
/// the rest. Unknown GPU ids and bad inputs are errors.
pub fn options(inp: &PlanInputs, catalog: &Catalog, t: &dyn Timing) -> Result<Plan, CalcError> {
    inp.traffic.validate()?;
    inp.targets.validate()?;
    if inp.candidates.is_empty() {
        return Err(CalcError::range_error(
            Phrase::tr("fld_candidates"),
            0,
            Phrase::tr("rng_one_accel"),
        ));
    }
    let mut rows = Vec::new();
    let mut notes = Vec::new();
    for c in &inp.candidates {
        let gpu = catalog.get(&c.gpu)?;
        let (lo, hi) = GPUS_PER_NODE_RANGE;
        let gpn = match c.gpus_per_node {
            Some(n) if n < lo || n > hi => {
                return Err(CalcError::range_error(
                    Phrase::tr("fld_gpus_per_node").val("gpu", &gpu.name),
                    n,
                    Phrase::tr("rng_whole_from_to").val("lo", lo).val("hi", hi),
                ))
            }
            Some(n) => n,
            None => default_gpus_per_node(gpu),
        };
        let price = price_of(gpu, c.price_usd_per_gpu_hour)?;
        let in_node_max = MAX_TP_IN_NODE.min(u64::from(gpn));
        let mut any_fits = false;
        let mut tp = 1u64;
        while tp <= in_node_max {
            if let Err(e) = t.check_tp(tp) {
                notes.push(
                    Phrase::tr("phr_plan_tp_skipped")
                        .val("tp", tp)
                        .val("gpu", &gpu.name)
                        .sub("why", Phrase::error(e)),
                );
            } else {
                match option_row(
                    &Row {
                        gpu,
                        tp,
                        gpn,
                        price,
                        crosses: false,
                    },
                    t,
                    inp,
                ) {
                    Ok(o) => {
                        any_fits |= o.max_batch_memory > 0;
                        rows.push(o);
                    }
                    Err(e) => notes.push(
                        Phrase::tr("phr_plan_option_skipped")
                            .val("gpu", &gpu.name)
                            .val("tp", tp)
                            .sub("why", Phrase::error(e)),
                    ),
                }
            }
            tp *= 2;
        }
        if !any_fits {
            let beyond = Row {
                gpu,
                tp: in_node_max,
                gpn,
                price,
                crosses: true,
            };
            rows.extend(cross_node_row(&beyond, t, inp));
        }
    }
    rank(&mut rows);
    let best = rows
        .iter()
        .position(|o| o.meets_targets && o.reason.is_none());
    if let Some(o) = best
        .and_then(|i| rows.get(i))
        .filter(|o| o.latency_lower_bound.is_some())
    {
        notes.push(
            Phrase::tr("phr_plan_best_lower_bound")
                .val("gpu", &o.gpu_name)
                .val("tp", o.tp),
        );
    }
    if let Some(c) = best.and_then(|i| rows.get(i)).and_then(|o| o.cold_start) {
        notes.push(Phrase::tr("phr_plan_cold_start").val("s", fmt_sig(c.0)));
    }
    let derivations = best
        .and_then(|i| rows.get(i))
        .map(|o| plan_derivations(o, inp))
        .unwrap_or_default();
    let (mi, mo) = inp.traffic.mean_lengths();
    Ok(Plan {
        model: t.model_name(),
        avg_rate_rps: inp.traffic.avg_rate_rps,
        peak_rate_rps: inp.traffic.peak_rate_rps(),
        mean_input_len: mi,
        mean_output_len: mo,
        targets: inp.targets,
        options: rows,
        best,
        notes,
        derivations,
    })
}

pub(super) fn viable(o: &PlanOption) -> bool {
    o.meets_targets && o.reason != Some(Reason::CrossesNodes)
}

/// Sorts rows (viable and timed in full by cost at peak, unpriced after priced; then viable
/// on lower-bound times only, likewise; then the rest) and assigns `MoreExpensive` / `NoPrice`
/// / `LatencyLowerBound` to viable rows other than the first. The best is thus timed in full
/// whenever such an option meets the targets.
fn rank(rows: &mut [PlanOption]) {
    let key = |o: &PlanOption| {
        let group = if viable(o) && o.latency_lower_bound.is_none() {
            0
        } else if viable(o) {
            1
        } else if o.meets_targets {
            2
        } else {
            match o.reason {
                Some(Reason::CrossesNodes) => 3,
                Some(Reason::MissesTpot) | Some(Reason::MissesTtft) => 4,
                _ => 5,
            }
        };
        (
            group,
            o.cost_per_hour_peak.unwrap_or(f64::INFINITY),
            o.gpus_peak,
        )
    };
    crate::base::order::sort_by(rows, &|a, b| {
        let (ga, ca, na) = key(a);
        let (gb, cb, nb) = key(b);
        ga.cmp(&gb)
            .then(ca.total_cmp(&cb))
            .then(na.cmp(&nb))
            .then(a.gpu.cmp(&b.gpu))
            .then(a.tp.cmp(&b.tp))
    });
    let mut first = true;
    for o in rows.iter_mut().filter(|o| viable(o)) {
        if first {
            o.reason = None;
            first = false;
        } else if o.latency_lower_bound.is_some() {
            o.reason = Some(Reason::LatencyLowerBound);
        } else {
            o.reason = Some(if o.cost_per_hour_peak.is_some() {
                Reason::MoreExpensive
            } else {
                Reason::NoPrice
            });
        }
    }
}

/// Plans capacity and reports impossible inputs as errors: a model that fits on no candidate
/// inside one node, a TTFT or TPOT target below what any option reaches at batch 1, or targets
/// that no single option meets together.
pub fn plan(inp: &PlanInputs, catalog: &Catalog, t: &dyn Timing) -> Result<Plan, CalcError> {
    let p = options(inp, catalog, t)?;
    if p.best.is_some() {
        return Ok(p);
    }
    feasibility_error(&p).map_or(Ok(p), Err)
}

/// Why a plan without a best option has none, as an error (`None` when it has one).
pub fn feasibility_error(p: &Plan) -> Option<CalcError> {
    if p.best.is_some() {
        return None;
    }
    let in_node: Vec<&PlanOption> = p
        .options
        .iter()
        .filter(|o| o.max_batch_memory > 0 && o.reason != Some(Reason::CrossesNodes))
        .collect();
    if in_node.is_empty() {
        let need = p
            .options
            .iter()
            .filter(|o| o.reason == Some(Reason::CrossesNodes))
            .map(|o| {
                Phrase::tr("phr_needs_tp")
                    .val("gpu", &o.gpu_name)
                    .val("tp", o.tp)
            })
            .collect::<Vec<_>>();
        return Some(CalcError::NoOptionFits {
            model: p.model.clone(),
            detail: if !need.is_empty() {
                Phrase::List(need)
            } else if let (true, Some(n)) = (p.options.is_empty(), p.notes.first()) {
                n.clone()
            } else {
                Phrase::tr("phr_no_candidate_holds")
            },
        });
    }
    let fastest = |f: fn(&PlanOption) -> f64| {
        in_node
            .iter()
            .min_by(|a, b| f(a).total_cmp(&f(b)))
            .map(|o| (f(o), format!("{} × TP {}", o.gpu_name, o.tp)))
    };
    if let Some((best, opt)) = fastest(|o| o.tpot.0) {
        if best > p.targets.tpot.0 {
            return Some(CalcError::TargetTooTight {
                metric: "TPOT".into(),
                target_ms: fmt_sig(p.targets.tpot.ms()),
                best_ms: fmt_sig(best * 1e3),
                option: opt,
            });
        }
    }
    if let Some((best, opt)) = fastest(|o| o.ttft.0) {
        if best > p.targets.ttft.0 {
            return Some(CalcError::TargetTooTight {
                metric: "TTFT".into(),
                target_ms: fmt_sig(p.targets.ttft.ms()),
                best_ms: fmt_sig(best * 1e3),
                option: opt,
            });
        }
    }
    Some(CalcError::NoOptionMeetsTargets {
        ttft_ms: fmt_sig(p.targets.ttft.ms()),
        tpot_ms: fmt_sig(p.targets.tpot.ms()),
    })
}

/// [`plan`] with the performance model for `model`.
pub fn plan_model(
    inp: &PlanInputs,
    catalog: &Catalog,
    model: &ModelDesc,
    weights_dtype: Option<Dtype>,
    kv_dtype: Option<Dtype>,
    eff: &Efficiencies,
) -> Result<Plan, CalcError> {
    let t = PerfTiming {
        model,
        eff: *eff,
        weights_dtype,
        kv_dtype,
    };
    plan(inp, catalog, &t)
}

#[cfg(test)]
mod tests {
    use super::super::traffic::{Bucket, Candidate};
    use super::*;
    use crate::calc::perf::{self, Workload};
    use crate::model::presets;

    fn model(id: &str) -> ModelDesc {
        presets::get(id)
            .map(|p| p.parse())
            .unwrap_or_else(|| panic!("preset {id}"))
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn inputs(rate: f64, gpus: &[&str], ttft_ms: f64, tpot_ms: f64) -> PlanInputs {
        PlanInputs {
            traffic: Traffic::mean(rate, 4.0, 1024, 256),
            targets: Targets::from_ms(ttft_ms, tpot_ms),
            candidates: gpus.iter().map(|g| Candidate::new(g)).collect(),
        }
    }

    #[test]
    fn best_batch_is_the_largest_meeting_the_targets() {
        // Check the binary search against a linear scan with the performance model.
        let m = model("meta-llama__Llama-2-7b-hf");
        let t = PerfTiming::new(&m);
        let g = Catalog::builtin()
            .get("l40s")
            .unwrap_or_else(|e| panic!("{e}"));
        let inp = inputs(1.0, &["l40s"], 2000.0, 30.0);
        let max_b = max_batch(&t, g, 1, &inp.traffic).unwrap_or(0);
        assert!(max_b > 2, "{max_b}");
        let (b, _) = best_batch(&t, g, 1, max_b, &inp.traffic, &inp.targets)
            .unwrap_or_else(|e| panic!("{e}"));
        let scan = (1..=max_b)
            .filter(|&b| {
                mixed_times(&t, g, 1, b, &inp.traffic).is_ok_and(|s| meets(&s, &inp.targets))
            })
            .max();
        assert_eq!(b, scan);
        // The memory limit equals perf's max batch for one bucket.
        let wl = Workload::new(1, 1024, 256, 1);
        assert_eq!(max_b, perf::max_batch_for(&m, g, &wl));
    }

    #[test]
    fn buckets_average_like_the_mean_for_linear_costs() {
        // Two buckets with the same lengths behave exactly like one.
        let m = model("meta-llama__Llama-2-7b-hf");
        let t = PerfTiming::new(&m);
        let one = inputs(2.0, &["h100-sxm"], 1000.0, 40.0);
        let mut two = one.clone();
        two.traffic.buckets = vec![
            Bucket {
                input_len: 1024,
                output_len: 256,
                share: 0.25,
            },
            Bucket {
                input_len: 1024,
                output_len: 256,
                share: 0.75,
            },
        ];
        let a = plan(&one, Catalog::builtin(), &t).unwrap_or_else(|e| panic!("{e}"));
        let b = plan(&two, Catalog::builtin(), &t).unwrap_or_else(|e| panic!("{e}"));
        let (x, y) = (a.best_option(), b.best_option());
        assert_eq!(
            x.map(|o| (o.batch, o.replicas_peak)),
            y.map(|o| (o.batch, o.replicas_peak))
        );
        assert!(x
            .zip(y)
            .is_some_and(|(x, y)| (x.e2e.0 / y.e2e.0 - 1.0).abs() < 1e-12));
    }

    #[test]
    fn tp_must_divide_heads_and_bridges_sit_in_eight_card_nodes() {
        // Qwen3-32B: 64 query heads, 8 KV heads → TP 1–8 split whole heads; TP 3 does not.
        let m = model("Qwen__Qwen3-32B");
        let t = PerfTiming::new(&m);
        assert!([1, 2, 4, 8, 16].iter().all(|tp| t.check_tp(*tp).is_ok()));
        assert!(t.check_tp(3).is_err());
        let c = Catalog::builtin();
        let g = |id: &str| c.get(id).map(default_gpus_per_node).unwrap_or(0);
        assert_eq!(g("h100-pcie"), 8);
        assert_eq!(g("h100-sxm"), 8);
        assert_eq!(g("rtx-4090"), 4);
        assert_eq!(g("gb200"), 72);
    }
}
