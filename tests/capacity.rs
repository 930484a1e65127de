//! Capacity planning (`core::capacity`), loading and offloading (`core::loading`), and the
//! `llmcalc plan` / `llmcalc load` commands. Expected values are computed here from the
//! definitions (Little's law, ceil of rate over capacity, bytes over the slowest stage, the
//! bandwidth ratio), or from a closed-form analytic timing model, never pasted from output.

mod common;

use llm_serving_calculator::cli;
use llm_serving_calculator::core::base::dtype::Dtype;
use llm_serving_calculator::core::base::error::CalcError;
use llm_serving_calculator::core::base::units::{BytesPerSecond, Seconds};
use llm_serving_calculator::core::calc::capacity::{
    self, Bucket, Candidate, Family, LargestReport, MemoryNeed, PerfTiming, PlanInputs, Reason,
    StepTimes, Targets, Timing, Traffic,
};
use llm_serving_calculator::core::calc::loading::{
    self, LoadInputs, OffloadInputs, StageKind, Storage,
};
use llm_serving_calculator::core::calc::perf::Efficiencies;
use llm_serving_calculator::core::hardware::catalog::{Accelerator, Catalog};
use llm_serving_calculator::core::model::presets;
use llm_serving_calculator::core::model::ModelDesc;

fn model(id: &str) -> ModelDesc {
    presets::get(id)
        .map(|p| p.parse())
        .unwrap_or_else(|| panic!("preset {id}"))
        .unwrap_or_else(|e| panic!("{e}"))
}

use common::{gpu, on, traffic};

fn inputs(rate: f64, peak: f64, gpus: &[&str], ttft_ms: f64, tpot_ms: f64) -> PlanInputs {
    PlanInputs {
        traffic: Traffic::mean(rate, peak, 1024, 256),
        targets: Targets::from_ms(ttft_ms, tpot_ms),
        candidates: gpus.iter().map(|g| Candidate::new(g)).collect(),
    }
}

/// A closed-form timing model: decode reads the weights once plus every sequence's KV cache
/// at the mean context; prefill is compute-bound at `2 × P` FLOPs per prompt token.
struct Analytic {
    params: f64,
    kv_per_token: f64,
    step_overhead_s: f64,
    prefill_overhead_s: f64,
}

impl Analytic {
    fn weights(&self, tp: u64) -> f64 {
        self.params * 2.0 / tp as f64
    }
    fn tpot(&self, g: &Accelerator, tp: u64, b: u64, i: u64, o: u64) -> f64 {
        let ctx = (i + o / 2) as f64;
        (self.weights(tp) + b as f64 * self.kv_per_token * ctx / tp as f64) / g.bandwidth.0
            + self.step_overhead_s
    }
    fn ttft(&self, g: &Accelerator, tp: u64, b: u64, i: u64) -> f64 {
        let peak = g.peaks.bf16.flops().map_or(f64::NAN, |f| f.0);
        b as f64 * i as f64 * 2.0 * self.params / (peak * tp as f64) + self.prefill_overhead_s
    }
}

impl Timing for Analytic {
    fn model_name(&self) -> String {
        "analytic".into()
    }
    fn memory(&self, g: &Accelerator, tp: u64, i: u64, o: u64) -> Result<MemoryNeed, CalcError> {
        Ok(MemoryNeed {
            usable_bytes: g.capacity().0 as f64 * 0.9,
            weight_bytes: self.weights(tp),
            kv_bytes_per_seq: self.kv_per_token * (i + o) as f64 / tp as f64,
        })
    }
    fn times(
        &self,
        g: &Accelerator,
        tp: u64,
        b: u64,
        i: u64,
        o: u64,
    ) -> Result<StepTimes, CalcError> {
        Ok(StepTimes {
            ttft: Seconds(self.ttft(g, tp, b, i)),
            tpot: Seconds(self.tpot(g, tp, b, i, o)),
            parts: None,
        })
    }
}

fn analytic() -> Analytic {
    // An 8B model with Llama-3-8B's 128 KiB of KV per token.
    Analytic {
        params: 8e9,
        kv_per_token: 131_072.0,
        step_overhead_s: 0.001,
        prefill_overhead_s: 0.005,
    }
}

#[test]
fn the_batch_is_the_largest_the_targets_and_memory_allow() {
    let a = analytic();
    let (i, o) = (1024u64, 256u64);
    for (g, ttft_ms, tpot_ms) in [
        ("h100-sxm", 2000.0, 30.0),
        ("l40s", 500.0, 60.0),
        ("a100-sxm-80gb", 10_000.0, 200.0),
    ] {
        let inp = PlanInputs {
            candidates: vec![Candidate::new(g)],
            ..inputs(1.0, 4.0, &[], ttft_ms, tpot_ms)
        };
        let plan =
            capacity::options(&inp, Catalog::builtin(), &a).unwrap_or_else(|e| panic!("{e}"));
        let acc = gpu(g);
        for opt in plan.options.iter().filter(|o| o.meets_targets) {
            let tp = opt.tp as f64;
            let bw = acc.bandwidth.0;
            // TPOT: W/BW + B × k × ctx / tp / BW + o ≤ T  →  B ≤ (T − o − W/BW) × BW × tp / (k × ctx).
            let ctx = (i + o / 2) as f64;
            let by_tpot = ((tpot_ms / 1e3 - a.step_overhead_s - a.weights(opt.tp) / bw) * bw * tp
                / (a.kv_per_token * ctx))
                .floor();
            // TTFT: B × I × 2P / (peak × tp) + o ≤ T.
            let peak = acc.peaks.bf16.flops().map_or(f64::NAN, |f| f.0);
            let by_ttft = ((ttft_ms / 1e3 - a.prefill_overhead_s) * peak * tp
                / (i as f64 * 2.0 * a.params))
                .floor();
            // Memory: (0.9 × capacity − W) / (k × (I + O) / tp).
            let by_mem = ((acc.capacity().0 as f64 * 0.9 - a.weights(opt.tp))
                / (a.kv_per_token * (i + o) as f64 / tp))
                .floor();
            let want = by_tpot.min(by_ttft).min(by_mem);
            assert_eq!(
                opt.batch as f64, want,
                "{g} TP {}: tpot {by_tpot}, ttft {by_ttft}, mem {by_mem}",
                opt.tp
            );
            assert_eq!(opt.max_batch_memory as f64, by_mem);
            // Little's law: requests/s = B / e2e with e2e = TTFT + (O − 1) × TPOT.
            let e2e = a.ttft(acc, opt.tp, opt.batch, i)
                + (o - 1) as f64 * a.tpot(acc, opt.tp, opt.batch, i, o);
            assert!((opt.e2e.0 / e2e - 1.0).abs() < 1e-12);
            assert!((opt.requests_per_s_per_replica - opt.batch as f64 / e2e).abs() < 1e-9);
            assert!((opt.concurrency_avg - 1.0 * e2e).abs() < 1e-9);
        }
    }
}

#[test]
fn replicas_scale_with_the_rate() {
    let m = model("meta-llama__Meta-Llama-3.1-8B");
    let t = PerfTiming::new(&m);
    for rate in [0.3, 1.0, 7.0, 25.0, 130.0] {
        let p = capacity::plan(
            &inputs(rate, 4.0, &["l40s", "h100-sxm"], 2000.0, 50.0),
            Catalog::builtin(),
            &t,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        for o in p.options.iter().filter(|o| o.meets_targets) {
            let per = o.requests_per_s_per_replica;
            assert_eq!(o.replicas_avg, ((rate / per).ceil() as u64).max(1), "{o:?}");
            assert_eq!(
                o.replicas_peak,
                ((4.0 * rate / per).ceil() as u64).max(1),
                "{o:?}"
            );
            // ×4 the rate → about ×4 the replicas (rounding up loses at most one per ×1 step).
            assert!(
                o.replicas_peak <= 4 * o.replicas_avg
                    && o.replicas_peak + 4 > 4 * o.replicas_avg.saturating_sub(1) + 1
            );
            assert_eq!(o.gpus_peak, o.replicas_peak * o.tp);
            let price = o.price_usd_per_gpu_hour.unwrap_or(f64::NAN);
            assert_eq!(o.cost_per_hour_peak, Some(o.gpus_peak as f64 * price));
            assert_eq!(
                o.cost_per_month_peak,
                Some(o.gpus_peak as f64 * price * 730.0)
            );
            let head = o.replicas_peak as f64 * per / (4.0 * rate) - 1.0;
            assert!((o.headroom_peak - head).abs() < 1e-12 && o.headroom_peak >= 0.0);
        }
        // Sorted by cost at the peak among the viable options; the first is the best.
        let costs: Vec<f64> = p
            .options
            .iter()
            .filter(|o| o.meets_targets && o.reason != Some(Reason::CrossesNodes))
            .filter_map(|o| o.cost_per_hour_peak)
            .collect();
        assert!(costs.windows(2).all(|w| w[0] <= w[1]), "{costs:?}");
        assert_eq!(p.best, Some(0));
        assert!(p.options.iter().skip(1).all(|o| o.reason.is_some()));
    }
}

/// Over latency targets from loose to tight (`inputs_at(target_ms)`), no option's requests/s
/// per replica ever rises, under both the performance model and the analytic timing.
fn throughput_never_rises_as_targets_tighten(
    m: &ModelDesc,
    targets_ms: &[f64],
    inputs_at: impl Fn(f64) -> PlanInputs,
) {
    let perf = PerfTiming::new(m);
    let a = analytic();
    for t in [&perf as &dyn Timing, &a] {
        let mut last: Vec<((String, u64), f64)> = Vec::new();
        for &target_ms in targets_ms {
            let inp = inputs_at(target_ms);
            let p =
                capacity::options(&inp, Catalog::builtin(), t).unwrap_or_else(|e| panic!("{e}"));
            let now: Vec<((String, u64), f64)> = p
                .options
                .iter()
                .map(|o| ((o.gpu.clone(), o.tp), o.requests_per_s_per_replica))
                .collect();
            for (k, v) in &now {
                if let Some((_, prev)) = last.iter().find(|(k2, _)| k2 == k) {
                    assert!(*v <= *prev, "{k:?} at {target_ms} ms: {v} > {prev}");
                }
            }
            last = now;
        }
    }
}

#[test]
fn a_tighter_tpot_never_increases_throughput_per_replica() {
    let m = model("Qwen__Qwen3-8B");
    throughput_never_rises_as_targets_tighten(
        &m,
        &[500.0, 100.0, 50.0, 30.0, 20.0, 12.0, 8.0, 5.0],
        |tpot_ms| inputs(5.0, 4.0, &["l40s", "h100-sxm", "a10g"], 60_000.0, tpot_ms),
    );
}

#[test]
fn impossible_targets_and_inputs_are_errors_with_one_sentence() {
    let m = model("meta-llama__Meta-Llama-3.1-8B");
    let t = PerfTiming::new(&m);
    let cat = Catalog::builtin();
    let one_sentence = |e: &CalcError| {
        let s = e.to_string();
        assert!(s.ends_with('.') && !s.contains('\n'), "{s}");
        assert!(!e
            .message(llm_serving_calculator::core::base::i18n::Lang::Ko)
            .is_empty());
    };
    // A TPOT below one decode step of the fastest option at batch 1, then the same for TTFT.
    for (ttft_ms, tpot_ms, want) in [(5000.0, 0.5, "TPOT"), (1.0, 500.0, "TTFT")] {
        let inp = inputs(1.0, 4.0, &["l40s", "h100-sxm"], ttft_ms, tpot_ms);
        let e = capacity::plan(&inp, cat, &t).err();
        assert!(
            matches!(&e, Some(CalcError::TargetTooTight { metric, .. }) if metric == want),
            "{e:?}"
        );
        e.iter().for_each(one_sentence);
    }
    // …but the table of losing options is still available to show next to it.
    let rows = capacity::options(&inputs(1.0, 4.0, &["l40s"], 1.0, 500.0), cat, &t)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !rows.options.is_empty()
            && rows
                .options
                .iter()
                .all(|o| o.reason == Some(Reason::MissesTtft))
    );
    assert!(capacity::feasibility_error(&rows).is_some());
    // Zero, negative and non-finite rates; multipliers below 1; shares not summing to 1.
    for bad in [0.0, -2.0, f64::NAN, f64::INFINITY] {
        let e = capacity::plan(&inputs(bad, 4.0, &["l40s"], 1000.0, 50.0), cat, &t).err();
        assert!(
            matches!(e, Some(CalcError::OutOfRange { .. })),
            "{bad}: {e:?}"
        );
    }
    assert!(capacity::plan(&inputs(1.0, 0.5, &["l40s"], 1000.0, 50.0), cat, &t).is_err());
    let mut skew = inputs(1.0, 4.0, &["l40s"], 1000.0, 50.0);
    skew.traffic.buckets = vec![
        Bucket {
            input_len: 512,
            output_len: 128,
            share: 0.6,
        },
        Bucket {
            input_len: 4096,
            output_len: 512,
            share: 0.3,
        },
    ];
    let e = capacity::plan(&skew, cat, &t).err();
    assert!(
        matches!(&e, Some(CalcError::OutOfRange { field, .. }) if field.to_string().contains("share")),
        "{e:?}"
    );
    // Unknown GPU.
    assert!(matches!(
        capacity::plan(&inputs(1.0, 4.0, &["h1000"], 1000.0, 50.0), cat, &t),
        Err(CalcError::UnknownGpu { .. })
    ));
}

#[test]
fn replicas_stay_inside_a_node() {
    // Llama-3.1-405B in bf16 is ≈ 811 GB: more than 8 × H100 80 GB hold. The planner says how
    // many GPUs a replica would need (a TP-16 row that crosses nodes) and refuses to plan.
    let m = model("meta-llama__Meta-Llama-3.1-405B");
    let t = PerfTiming::new(&m);
    let inp = inputs(1.0, 4.0, &["h100-sxm"], 10_000.0, 200.0);
    let rows = capacity::options(&inp, Catalog::builtin(), &t).unwrap_or_else(|e| panic!("{e}"));
    let cross: Vec<_> = rows
        .options
        .iter()
        .filter(|o| o.reason == Some(Reason::CrossesNodes))
        .collect();
    assert_eq!(cross.len(), 1, "{:?}", rows.options);
    assert!(cross.iter().all(|o| o.tp == 16 && o.max_batch_memory > 0));
    assert!(rows
        .options
        .iter()
        .filter(|o| o.tp <= 8)
        .all(|o| o.reason == Some(Reason::DoesNotFit)));
    let e = capacity::plan(&inp, Catalog::builtin(), &t).err();
    assert!(
        matches!(&e, Some(CalcError::NoOptionFits { detail, .. }) if detail.to_string().contains("TP 16")),
        "{e:?}"
    );
    // In fp8 (≈ 405 GB) it fits inside one 8-GPU node, so there is a best option.
    let fp8 = PerfTiming {
        weights_dtype: Some(Dtype::Fp8),
        ..PerfTiming::new(&m)
    };
    let p = capacity::plan(&inp, Catalog::builtin(), &fp8).unwrap_or_else(|e| panic!("{e}"));
    assert!(p
        .best_option()
        .is_some_and(|o| o.tp == 8 && o.nodes_peak == o.replicas_peak));
    // A bridged PCIe card sits in an 8-card server: TP 4 is still inside the node.
    let small = model("meta-llama__Meta-Llama-3.1-8B");
    let rows = capacity::options(
        &inputs(1.0, 4.0, &["h100-pcie"], 5000.0, 100.0),
        Catalog::builtin(),
        &PerfTiming::new(&small),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(rows
        .options
        .iter()
        .any(|o| o.tp == 4 && o.reason != Some(Reason::CrossesNodes)));
}

#[test]
fn prices_can_be_overridden_and_the_cost_curve_steps_up() {
    let m = model("meta-llama__Meta-Llama-3.1-8B");
    let t = PerfTiming::new(&m);
    let mut inp = inputs(12.0, 4.0, &["l40s", "h100-sxm"], 2000.0, 50.0);
    let p = capacity::plan(&inp, Catalog::builtin(), &t).unwrap_or_else(|e| panic!("{e}"));
    let curve = capacity::cost_curve(&p, 9);
    assert_eq!(curve.rates_rps.len(), 9);
    assert_eq!(curve.rates_rps.last().copied(), Some(2.0 * 48.0));
    for s in &curve.series {
        assert!(s.cost_per_hour.windows(2).all(|w| w[0] <= w[1]), "{s:?}");
        // The middle point is the peak rate: the option's own peak cost.
        let o = p.options.iter().find(|o| o.gpu == s.gpu && o.tp == s.tp);
        assert_eq!(
            s.cost_per_hour.get(4).copied(),
            o.and_then(|o| o.cost_per_hour_peak)
        );
    }
    for (i, c) in curve.cheapest.iter().enumerate() {
        let min = curve
            .series
            .iter()
            .filter_map(|s| s.cost_per_hour.get(i))
            .fold(f64::INFINITY, |a, b| a.min(*b));
        assert_eq!(*c, min);
    }
    // Halving the H100 price halves its cost and never makes it more expensive to pick.
    let h = |p: &capacity::Plan| {
        p.options
            .iter()
            .find(|o| o.gpu == "h100-sxm" && o.tp == 1)
            .and_then(|o| o.cost_per_hour_peak)
    };
    let before = h(&p);
    inp.candidates[1].price_usd_per_gpu_hour =
        gpu("h100-sxm").price.as_ref().map(|x| x.usd_per_hour / 2.0);
    let p2 = capacity::plan(&inp, Catalog::builtin(), &t).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(h(&p2), before.map(|c| c / 2.0));
}

#[test]
fn a_larger_model_can_meet_the_same_targets_on_the_same_hardware() {
    // The chapter: a well-served 32B can replace an 8B on the same hardware.
    let models: Vec<ModelDesc> = [
        "Qwen__Qwen3-8B",
        "Qwen__Qwen3-32B",
        "meta-llama__Meta-Llama-3.1-405B",
    ]
    .iter()
    .map(|id| model(id))
    .collect();
    let inp = inputs(2.0, 4.0, &["h100-sxm"], 3000.0, 50.0);
    let v = capacity::largest_models(
        &models,
        &inp,
        Catalog::builtin(),
        None,
        None,
        &Efficiencies::default(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(v.len(), 3);
    assert!(v.windows(2).all(|w| w[0].params_total >= w[1].params_total));
    // 405B in bf16 does not fit inside one node; both Qwen3 sizes meet the targets.
    assert!(!v[0].meets_targets && v[0].why_not.is_some());
    assert!(v[1].meets_targets && v[2].meets_targets, "{v:?}");
    let largest = v.iter().find(|x| x.meets_targets).map(|x| x.params_total);
    assert_eq!(largest, Some(v[1].params_total));
    assert!(v[1].params_total > 3 * v[2].params_total);
}

#[test]
fn load_time_is_bytes_over_the_slowest_stage() {
    let m = model("Qwen__Qwen3-32B");
    for g in ["h100-sxm", "l40s", "gh200-96gb", "b300"] {
        let acc = gpu(g);
        let (_, link) = loading::host_link(acc).unwrap_or_else(|| panic!("{g}: no host link"));
        for storage in Storage::ALL {
            for tp in [1u64, 2, 8] {
                let inp = LoadInputs {
                    storage_bandwidth: storage.bandwidth(),
                    tp,
                    ..LoadInputs::default()
                };
                let r = loading::load_time(&m, acc, &inp).unwrap_or_else(|e| panic!("{e}"));
                let w = r.model_bytes.0 as f64;
                let per_gpu = r.bytes_per_gpu.0 as f64;
                let t_storage = w / storage.bandwidth().0;
                let t_link = per_gpu / (link.0 * loading::HOST_LINK_EFFICIENCY);
                assert!((r.storage.seconds.0 - t_storage).abs() < 1e-9);
                assert!((r.host_to_gpu.seconds.0 - t_link).abs() < 1e-9);
                assert_eq!(r.load.0, t_storage.max(t_link));
                assert_eq!(
                    r.slowest,
                    if t_storage >= t_link {
                        StageKind::Storage
                    } else {
                        StageKind::HostToGpu
                    }
                );
                assert!((r.cold_start.0 - r.load.0 - loading::ENGINE_STARTUP_S).abs() < 1e-9);
            }
        }
    }
    // Fast storage (a RAM disk, 200 GB/s): the host link becomes the bottleneck, and TP 2
    // halves the load because each GPU copies half over its own link.
    let fast = |tp| LoadInputs {
        storage_bandwidth: BytesPerSecond::from_gbps(200.0),
        tp,
        ..LoadInputs::default()
    };
    let one = loading::load_time(&m, gpu("l40s"), &fast(1)).unwrap_or_else(|e| panic!("{e}"));
    let two = loading::load_time(&m, gpu("l40s"), &fast(2)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(one.slowest, StageKind::HostToGpu);
    assert!((two.load.0 / one.load.0 - 0.5).abs() < 1e-3);
}

#[test]
fn offloaded_decode_is_slower_by_about_hbm_over_the_host_link() {
    // A 32B model: its 64 GB of weights dominate a batch-1 decode step even on a B200.
    let m = model("Qwen__Qwen3-32B");
    let eff = Efficiencies::default();
    for g in ["h100-sxm", "h200-sxm", "l40s", "b200"] {
        let acc = gpu(g);
        let r = loading::offload(&m, acc, &OffloadInputs::default(), &eff)
            .unwrap_or_else(|e| panic!("{e}"));
        let link =
            loading::host_link(acc).map_or(f64::NAN, |(_, b)| b.0) * loading::HOST_LINK_EFFICIENCY;
        let ratio = acc.bandwidth.0 * eff.bandwidth / link;
        // The weight stream dominates batch-1 decode; fixed overheads dilute the ratio a little.
        assert!(
            r.slowdown_weights > 0.8 * ratio && r.slowdown_weights <= ratio * (1.0 + 1e-12),
            "{g}: {} vs {ratio}",
            r.slowdown_weights
        );
        assert!(r.tpot_weights_offloaded.0 > 10.0 * r.tpot_on_gpu.0);
    }
}

use common::run_cli as run;

const LLAMA8B: &str = "data/presets/meta-llama__Meta-Llama-3.1-8B.json";

fn plan_args<'a>(rate: &'a str, tpot: &'a str) -> Vec<&'a str> {
    let head = [
        "plan", "--config", LLAMA8B, "--gpu", "l40s", "--gpu", "h100-sxm",
    ];
    [&head[..], &traffic(rate, tpot)].concat()
}

#[test]
fn cli_plan_prints_one_entry_per_option() {
    let mut a = plan_args("10", "50");
    a.push("--json");
    let (code, out, err) = run(&a);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let opts = v.as_array().unwrap_or_else(|| panic!("{v}"));
    assert_eq!(opts.len(), 8, "2 GPUs × TP 1, 2, 4, 8");
    for k in [
        "gpu",
        "tp",
        "batch",
        "requests_per_s_per_replica",
        "replicas_avg",
        "replicas_peak",
        "gpus_peak",
        "cost_per_hour_peak",
        "meets_targets",
        "reason",
    ] {
        assert!(opts.iter().all(|o| o.get(k).is_some()), "missing {k}");
    }
    assert!(opts
        .first()
        .is_some_and(|o| o["reason"].is_null() && o["meets_targets"] == true));
    for o in opts.iter().filter(|o| o["meets_targets"] == true) {
        let per = o["requests_per_s_per_replica"].as_f64().unwrap_or(f64::NAN);
        assert_eq!(
            o["replicas_peak"].as_u64(),
            Some((40.0 / per).ceil() as u64)
        );
    }
    // The cost curve.
    let mut c = plan_args("10", "50");
    c.extend(["--curve", "5"]);
    let (code, out, err) = run(&c);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("rates_rps") && out.contains("cheapest"));
    // Buckets and per-GPU prices.
    let (code, out, err) = run(&[
        "plan",
        "--config",
        LLAMA8B,
        "--gpu",
        "l40s",
        "--rate",
        "3",
        "--buckets",
        "512:128:0.7,4096:512:0.3",
        "--ttft-ms",
        "4000",
        "--tpot-ms",
        "60",
        "--price",
        "l40s=1",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}"));
    let first = v.get(0).unwrap_or_else(|| panic!("{v}"));
    assert_eq!(
        first["cost_per_hour_peak"].as_f64(),
        first["gpus_peak"].as_f64()
    );
}

#[test]
fn cli_bad_input_exits_2_with_one_sentence() {
    // A rate of 1, then `buckets` (none: no lengths either), then targets of 1 ms.
    let plan = |buckets: &[&'static str]| {
        let args = [
            &["--rate", "1"][..],
            buckets,
            &["--ttft-ms", "1", "--tpot-ms", "1"],
        ];
        on("plan", LLAMA8B, "l40s", &args.concat())
    };
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (plan_args("0", "50"), "rate"),
        (plan_args("-3", "50"), "rate"),
        (plan_args("abc", "50"), "rate"),
        (plan_args("1", "0.01"), "TPOT"),
        (plan(&["--buckets", "1:2:0.5"]), "share"),
        (plan(&["--buckets", "x"]), "buckets"),
        (plan(&[]), "input-len"),
        (
            on("load", LLAMA8B, "a10g", &["--storage-gbps", "0"]),
            "storage-gbps",
        ),
        (
            on("load", LLAMA8B, "a10g", &["--storage", "floppy"]),
            "storage",
        ),
        (on("load", LLAMA8B, "tpu-v4", &[]), "host link"),
        (on("load", LLAMA8B, "l40s", &["--tp", "0"]), "tp"),
    ];
    for (args, word) in cases {
        let (code, out, err) = run(&args);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(word), "{args:?}: {err}");
        assert!(!err.contains("panicked"));
    }
}

#[test]
fn cli_load_reports_each_stage() {
    let (code, out, err) = run(&[
        "load",
        "--config",
        "data/presets/meta-llama__Meta-Llama-3.1-70B.json",
        "--gpu",
        "h100-sxm",
        "--tp",
        "4",
        "--storage-gbps",
        "2",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}"));
    let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
    let bytes = f("model_bytes");
    assert!((f("storage_seconds") - bytes / 2e9).abs() < 1e-9);
    let per_gpu = f("bytes_per_gpu");
    assert!(
        (f("host_to_gpu_seconds") - per_gpu / (64e9 * loading::HOST_LINK_EFFICIENCY)).abs() < 1e-9
    );
    assert_eq!(
        f("load_seconds"),
        f("storage_seconds").max(f("host_to_gpu_seconds"))
    );
    assert_eq!(
        f("cold_start_seconds"),
        f("load_seconds") + f("engine_startup_seconds")
    );
    assert!(v["offload"]["slowdown_weights"]
        .as_f64()
        .is_some_and(|s| s > 10.0));
}

// ---------------------------------------------------------------------------------------------
// Largest model that meets the target; GPUs per node
// ---------------------------------------------------------------------------------------------

#[track_caller]
fn family_report(f: Family, inp: &PlanInputs) -> LargestReport {
    capacity::largest_in_family(
        f,
        inp,
        Catalog::builtin(),
        None,
        None,
        &Efficiencies::default(),
    )
    .unwrap_or_else(|e| panic!("{}: {e}", f.id()))
}

/// The size of the answer, 0 when no size meets the targets.
fn largest_params(r: &LargestReport) -> u64 {
    r.largest
        .and_then(|i| r.verdicts.get(i))
        .map_or(0, |v| v.params_total)
}

#[test]
fn the_largest_model_meets_the_targets_and_every_larger_one_fails() {
    let cat = Catalog::builtin();
    let cases: [(&[&str], f64, f64); 3] = [
        (&["h100-sxm"], 2000.0, 50.0),
        (&["l40s", "a10g"], 5000.0, 100.0),
        (&["h100-sxm", "l40s"], 800.0, 25.0),
    ];
    let mut answers = 0;
    for fam in Family::ALL {
        let models = fam.models().unwrap_or_else(|e| panic!("{e}"));
        for (gpus, ttft_ms, tpot_ms) in cases {
            let inp = inputs(5.0, 4.0, gpus, ttft_ms, tpot_ms);
            let r = family_report(*fam, &inp);
            assert_eq!(r.verdicts.len(), fam.preset_ids().len());
            assert!(r
                .verdicts
                .windows(2)
                .all(|w| w[0].params_total >= w[1].params_total));
            let first_meeting = r.verdicts.iter().position(|v| v.meets_targets);
            assert_eq!(r.largest, first_meeting);
            let upto = r.largest.unwrap_or(r.verdicts.len());
            for v in r.verdicts.iter().take(upto) {
                // Every larger size fails, with a reason, and planning it alone agrees.
                assert!(!v.meets_targets && v.best.is_none() && v.why_not.is_some());
                let m = models.iter().find(|m| m.name == v.model);
                let alone = m.map(|m| capacity::plan(&inp, cat, &PerfTiming::new(m)));
                assert!(matches!(alone, Some(Err(_))), "{}: {alone:?}", v.model);
            }
            let Some(v) = r.largest.and_then(|i| r.verdicts.get(i)) else {
                continue;
            };
            answers += 1;
            // The answer meets both targets, checked against the timing model directly, at
            // the largest batch memory and the targets allow.
            let o = v.best.as_ref().unwrap_or_else(|| panic!("{v:?}"));
            let m = models
                .iter()
                .find(|m| m.name == v.model)
                .unwrap_or_else(|| panic!("{}", v.model));
            let t = PerfTiming::new(m);
            let at = |b: u64| {
                t.times(gpu(&o.gpu), o.tp, b, 1024, 256)
                    .unwrap_or_else(|e| panic!("{e}"))
            };
            let s = at(o.batch);
            assert!(s.ttft.0 <= inp.targets.ttft.0 && s.tpot.0 <= inp.targets.tpot.0);
            assert!(o.batch >= 1 && o.batch <= o.max_batch_memory);
            if o.batch < o.max_batch_memory {
                let n = at(o.batch + 1);
                assert!(n.ttft.0 > inp.targets.ttft.0 || n.tpot.0 > inp.targets.tpot.0);
            }
            assert!(o.tp <= u64::from(o.gpus_per_node) && o.reason.is_none());
            // Little's law.
            assert!((o.requests_per_s_per_replica - o.batch as f64 / o.e2e.0).abs() < 1e-9);
        }
    }
    assert!(answers > 5, "too few cases with an answer: {answers}");
}

#[test]
fn relaxing_a_target_never_shrinks_the_answer() {
    let mut grew = false;
    for fam in [
        Family::Qwen3,
        Family::Llama3,
        Family::Qwen25,
        Family::GptOss,
    ] {
        let mut last = 0;
        for tpot_ms in [3.0, 6.0, 10.0, 15.0, 20.0, 30.0, 50.0, 100.0, 1000.0] {
            let r = family_report(
                fam,
                &inputs(5.0, 4.0, &["h100-sxm", "l40s"], 5000.0, tpot_ms),
            );
            let now = largest_params(&r);
            assert!(
                now >= last,
                "{} at TPOT {tpot_ms} ms: {now} < {last}",
                fam.id()
            );
            grew |= last > 0 && now > last;
            last = now;
        }
        assert!(last > 0, "{}: nothing meets TPOT 1 s", fam.id());
        let mut last = 0;
        for ttft_ms in [5.0, 20.0, 100.0, 500.0, 2000.0, 10_000.0] {
            let r = family_report(
                fam,
                &inputs(5.0, 4.0, &["h100-sxm", "l40s"], ttft_ms, 200.0),
            );
            let now = largest_params(&r);
            assert!(
                now >= last,
                "{} at TTFT {ttft_ms} ms: {now} < {last}",
                fam.id()
            );
            last = now;
        }
    }
    // Looser targets do admit a larger size somewhere (the chapter's point).
    assert!(grew);
}

#[test]
fn families_parse_and_impossible_inputs_are_one_sentence() {
    for f in Family::ALL {
        assert_eq!(Family::parse(f.id()).ok(), Some(*f));
        assert_eq!(Family::parse(&f.id().to_uppercase()).ok(), Some(*f));
        let ms = f.models().unwrap_or_else(|e| panic!("{e}"));
        assert!(ms.len() >= 2, "{}", f.id());
        // Listed smallest first, and named by the preset (not the config's model type).
        assert!(ms.windows(2).all(|w| w[0].params.total < w[1].params.total));
        for (m, id) in ms.iter().zip(f.preset_ids()) {
            assert_eq!(Some(&m.name), presets::get(id).map(|p| &p.name));
        }
    }
    assert_eq!(Family::parse("qwen2_5").ok(), Some(Family::Qwen25));
    let sentence = |e: &CalcError| {
        let s = e.to_string();
        assert!(s.ends_with('.') && !s.contains('\n'), "{s}");
        let ko = e.message(llm_serving_calculator::core::base::i18n::Lang::Ko);
        assert!(!ko.is_empty() && ko != s, "{ko}");
    };
    for bad in ["gemma", "", "qwen4"] {
        let e = Family::parse(bad).err();
        assert!(
            matches!(&e, Some(CalcError::BadValue { expected, .. }) if expected.to_string().contains("llama3")),
            "{e:?}"
        );
        e.iter().for_each(sentence);
    }
    // GPUs per node out of range (0 included) refuse the plan and the family alike.
    let (lo, hi) = capacity::GPUS_PER_NODE_RANGE;
    let m = model("meta-llama__Meta-Llama-3.1-8B");
    for n in [0, lo - 1, hi + 1, u32::MAX] {
        let mut inp = inputs(1.0, 4.0, &["h100-sxm"], 2000.0, 50.0);
        inp.candidates[0].gpus_per_node = Some(n);
        let e = capacity::plan(&inp, Catalog::builtin(), &PerfTiming::new(&m)).err();
        assert!(
            matches!(&e, Some(CalcError::OutOfRange { field, .. }) if field.to_string().contains("GPUs per node")),
            "{n}: {e:?}"
        );
        e.iter().for_each(sentence);
        let e = capacity::largest_in_family(
            Family::Qwen3,
            &inp,
            Catalog::builtin(),
            None,
            None,
            &Efficiencies::default(),
        )
        .err();
        assert!(matches!(e, Some(CalcError::OutOfRange { .. })), "{e:?}");
    }
    for n in [lo, hi] {
        let mut inp = inputs(1.0, 4.0, &["h100-sxm"], 2000.0, 50.0);
        inp.candidates[0].gpus_per_node = Some(n);
        assert!(capacity::plan(&inp, Catalog::builtin(), &PerfTiming::new(&m)).is_ok());
    }
}

#[test]
fn options_beyond_the_node_are_flagged_as_crossing_nodes() {
    // Llama 3.1 70B in bf16 (≈ 141 GB) on 80 GB H100s, with nodes of 1, 2, 4 and 8 GPUs.
    let m = model("meta-llama__Meta-Llama-3.1-70B");
    let t = PerfTiming::new(&m);
    let h100 = gpu("h100-sxm");
    // The smallest power-of-two TP whose memory holds the weights and one sequence.
    let fits = |tp: u64| {
        t.memory(h100, tp, 1024, 256)
            .is_ok_and(|n| n.usable_bytes - n.weight_bytes >= n.kv_bytes_per_seq)
    };
    let need = [1u64, 2, 4, 8, 16]
        .into_iter()
        .find(|tp| fits(*tp))
        .unwrap_or(0);
    assert!(need >= 2, "{need}");
    for n in [1u32, 2, 4, 8] {
        let mut inp = inputs(1.0, 4.0, &["h100-sxm"], 20_000.0, 200.0);
        inp.candidates[0].gpus_per_node = Some(n);
        let rows =
            capacity::options(&inp, Catalog::builtin(), &t).unwrap_or_else(|e| panic!("{e}"));
        assert!(rows.options.iter().all(|o| o.gpus_per_node == n));
        for o in &rows.options {
            let crosses = o.tp > u64::from(n);
            assert_eq!(
                o.reason == Some(Reason::CrossesNodes),
                crosses,
                "{n}: {o:?}"
            );
        }
        let plan = capacity::plan(&inp, Catalog::builtin(), &t);
        if u64::from(n) < need {
            // One row says what a replica would need; the plan is refused with that sentence.
            let cross: Vec<u64> = rows
                .options
                .iter()
                .filter(|o| o.reason == Some(Reason::CrossesNodes))
                .map(|o| o.tp)
                .collect();
            assert_eq!(cross, vec![need], "{n}");
            assert!(
                matches!(&plan, Err(CalcError::NoOptionFits { detail, .. }) if detail.to_string().contains(&format!("TP {need}"))),
                "{n}: {plan:?}"
            );
        } else {
            let p = plan.unwrap_or_else(|e| panic!("{n}: {e}"));
            let b = p.best_option().unwrap_or_else(|| panic!("{n}"));
            assert!(b.tp >= need && b.tp <= u64::from(n));
            // Replicas pack into nodes: ⌈replicas / ⌊node / tp⌋⌉.
            let per_node = u64::from(n) / b.tp;
            assert_eq!(b.nodes_peak, b.replicas_peak.div_ceil(per_node));
        }
    }
}

#[test]
fn cli_plan_largest_reports_each_size() {
    let args = |family: &'static str, tpot: &'static str| -> Vec<&'static str> {
        let head = ["plan", "--largest", "--family", family, "--gpu", "h100-sxm"];
        [&head[..], &traffic("5", tpot)].concat()
    };
    let mut a = args("llama3", "50");
    a.push("--json");
    let (code, out, err) = run(&a);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v["family"], "llama3");
    assert_eq!(v["targets"]["tpot_ms"].as_f64(), Some(50.0));
    let ms = v["models"].as_array().unwrap_or_else(|| panic!("{v}"));
    assert_eq!(ms.len(), Family::Llama3.preset_ids().len());
    let params: Vec<u64> = ms
        .iter()
        .filter_map(|m| m["params_total"].as_u64())
        .collect();
    assert!(params.len() == ms.len() && params.windows(2).all(|w| w[0] >= w[1]));
    let first = ms.iter().find(|m| m["meets_targets"] == true);
    assert_eq!(first.map(|m| &m["model"]), Some(&v["largest"]));
    for m in ms {
        let best = &m["best"];
        if m["meets_targets"] == true {
            assert!(best["ttft_ms"].as_f64().is_some_and(|x| x <= 2000.0), "{m}");
            assert!(best["tpot_ms"].as_f64().is_some_and(|x| x <= 50.0), "{m}");
            assert!(m["why_not"].is_null());
        } else {
            assert!(best.is_null() && m["why_not"].is_string(), "{m}");
        }
    }
    // The same answer as the library.
    let r = family_report(
        Family::Llama3,
        &inputs(5.0, 4.0, &["h100-sxm"], 2000.0, 50.0),
    );
    assert_eq!(
        v["largest"].as_str(),
        r.largest
            .and_then(|i| r.verdicts.get(i))
            .map(|x| x.model.as_str())
    );
    // Text mode marks the answer.
    let (code, out, _) = run(&args("qwen3", "50"));
    assert_eq!(code, 0);
    assert_eq!(out.matches("← largest").count(), 1, "{out}");
    // Bad input: one sentence, exit 2.
    let mut node0 = args("qwen3", "50");
    node0.extend(["--gpus-per-node", "0"]);
    let mut with_config = args("qwen3", "50");
    with_config.extend(["--config", LLAMA8B]);
    let mut family_alone = plan_args("1", "50");
    family_alone.extend(["--family", "qwen3"]);
    let no_family: Vec<&str> = args("qwen3", "50")
        .into_iter()
        .filter(|a| *a != "--family" && *a != "qwen3")
        .collect();
    for (a, word) in [
        (args("gemma", "50"), "family"),
        (node0, "gpus-per-node"),
        (with_config, "--config"),
        (family_alone, "--largest"),
        (no_family, "--family"),
    ] {
        let (code, out, err) = run(&a);
        assert_eq!(code, 2, "{a:?}: {out}");
        assert_eq!(err.trim().lines().count(), 1, "{err}");
        assert!(err.contains(word), "{a:?}: {err}");
    }
}

#[test]
fn ttft_under_load_is_one_prompt_plus_the_step_in_flight() {
    // `PerfTiming` against the performance model's own passes (core::capacity module docs):
    // TPOT(B) = decode(B) + prefill(B) / O, TTFT(B) = prefill(1) + TPOT(B) (prefill(1) at B = 1).
    use llm_serving_calculator::core::calc::perf::{self, Workload};
    let m = model("Qwen__Qwen3-8B");
    let t = PerfTiming::new(&m);
    let (i, o) = (2048u64, 256u64);
    for (g, tp) in [("h100-sxm", 1u64), ("l40s", 2), ("a10g", 1)] {
        let acc = gpu(g);
        let pass = |b: u64| {
            perf::evaluate(
                &m,
                acc,
                &Workload::new(b, i, o, tp),
                &Efficiencies::default(),
                None,
            )
            .unwrap_or_else(|e| panic!("{e}"))
        };
        let one = pass(1);
        let mut last = (0.0, 0.0);
        for b in [1u64, 2, 8, 32, 64] {
            let s = t.times(acc, tp, b, i, o).unwrap_or_else(|e| panic!("{e}"));
            let r = pass(b);
            let tpot = r.tpot.0 + r.ttft.0 / o as f64;
            let ttft = one.ttft.0 + if b > 1 { tpot } else { 0.0 };
            assert!((s.tpot.0 / tpot - 1.0).abs() < 1e-12, "{g} B {b}");
            assert!((s.ttft.0 / ttft - 1.0).abs() < 1e-12, "{g} B {b}");
            // Over a request's life: prefill(1) + O × decode(B) + prefill(B) (+ nothing else).
            let life = s.ttft.0 + (o - 1) as f64 * s.tpot.0;
            let want =
                one.ttft.0 + o as f64 * r.tpot.0 + r.ttft.0 - if b > 1 { 0.0 } else { s.tpot.0 };
            assert!(
                (life / want - 1.0).abs() < 1e-9,
                "{g} B {b}: {life} vs {want}"
            );
            // Both rise with the batch (the binary search relies on it).
            assert!(s.ttft.0 >= last.0 && s.tpot.0 >= last.1, "{g} B {b}");
            last = (s.ttft.0, s.tpot.0);
            // At a large batch a new request no longer waits for every prompt's prefill.
            if b >= 32 {
                assert!(
                    s.ttft.0 < r.ttft.0,
                    "{g} B {b}: {} ≥ {}",
                    s.ttft.0,
                    r.ttft.0
                );
            }
        }
    }
}

#[test]
fn a_tighter_ttft_never_increases_throughput_per_replica() {
    let m = model("Qwen__Qwen3-8B");
    throughput_never_rises_as_targets_tighten(
        &m,
        &[60_000.0, 5000.0, 1000.0, 300.0, 150.0, 80.0, 50.0, 30.0],
        |ttft_ms| {
            let mut inp = inputs(5.0, 4.0, &["l40s", "h100-sxm", "a10g"], ttft_ms, 500.0);
            inp.traffic.buckets[0].input_len = 4096;
            inp
        },
    );
}

#[test]
fn pass_times_are_evaluates_ttft_and_tpot() {
    // The planner's fast path must time exactly what the performance model reports.
    use llm_serving_calculator::core::calc::perf::{self, Workload};
    let eff = Efficiencies::default();
    let mut compared = 0;
    for p in presets::all() {
        let Ok(m) = p.parse() else { continue };
        for g in ["h100-sxm", "l40s", "tpu-v4"] {
            for (b, tp) in [(1u64, 1u64), (16, 2), (3, 3)] {
                let wl = Workload::new(b, 1000, 300, tp);
                let fast = perf::pass_times(&m, gpu(g), &wl, &eff);
                let full = perf::evaluate(&m, gpu(g), &wl, &eff, None).map(|r| (r.ttft, r.tpot));
                match (&fast, &full) {
                    (Ok(x), Ok(y)) => {
                        assert_eq!(x, y, "{} {g} B {b} TP {tp}", p.id);
                        compared += 1;
                    }
                    (Err(x), Err(y)) => assert_eq!(x, y),
                    _ => panic!("{} {g}: {fast:?} vs {full:?}", p.id),
                }
            }
        }
    }
    assert!(compared > 50, "{compared}");
}

/// The planner's notes (shown under the web planner, printed by `llmcalc plan`) are phrases:
/// English as before, and wholly Korean in the Korean UI, the error inside a skipped-TP note
/// included.
#[test]
fn plan_notes_read_in_both_languages() {
    use llm_serving_calculator::core::base::error::Phrase;
    use llm_serving_calculator::core::base::i18n::Lang;
    let cat = Catalog::builtin();
    let mut notes: Vec<Phrase> = Vec::new();
    // 405B in bf16 on H100: TP 1–8 do not fit, TP 16 spans two nodes.
    let big = model("meta-llama__Meta-Llama-3.1-405B");
    let inp = inputs(1.0, 4.0, &["h100-sxm"], 10_000.0, 200.0);
    let rows =
        capacity::options(&inp, cat, &PerfTiming::new(&big)).unwrap_or_else(|e| panic!("{e}"));
    notes.extend(rows.options.iter().flat_map(|o| o.notes.clone()));
    // Falcon-7B's 71 query heads: every TP above 1 is skipped; TP 1 is the best option, so the
    // cold start of one more replica is noted. An impossible TPOT adds the batch-1 figures.
    let falcon = model("tiiuae__falcon-7b");
    let p = capacity::plan(
        &inputs(1.0, 4.0, &["h100-sxm"], 10_000.0, 200.0),
        cat,
        &PerfTiming::new(&falcon),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    notes.extend(p.notes.clone());
    let rows = capacity::options(
        &inputs(1.0, 4.0, &["h100-sxm"], 10_000.0, 0.01),
        cat,
        &PerfTiming::new(&falcon),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    notes.extend(rows.options.iter().flat_map(|o| o.notes.clone()));
    let en: Vec<String> = notes.iter().map(|n| n.text(Lang::En)).collect();
    // The node of the H100 (its catalog default) and the smallest TP beyond it that fits.
    let h100 = gpu("h100-sxm");
    let gpn = u64::from(capacity::default_gpus_per_node(h100));
    let cross_tp = (gpn + 1).next_power_of_two();
    let starts = [
        format!(
            "A replica on {} × TP {cross_tp} spans {} nodes of {gpn} GPUs",
            h100.name,
            cross_tp.div_ceil(gpn)
        ),
        format!(
            "The weights (plus one sequence's KV cache) do not fit in {} × TP {gpn}.",
            h100.name
        ),
        format!("TP 2 skipped on {}: ", h100.name),
        "One more replica of the best option takes about ".to_string(),
        "At batch 1: TTFT ".to_string(),
    ];
    for start in &starts {
        assert!(
            en.iter().any(|n| n.starts_with(start)),
            "no note {start:?} in {en:#?}"
        );
    }
    for (n, e) in notes.iter().zip(&en) {
        assert_eq!(&n.to_string(), e);
        let ko = n.text(Lang::Ko);
        assert!(ko.chars().any(|c| ('가'..='힣').contains(&c)), "{ko}");
        for word in ["replica", "skipped", "weights", "target", "divide", "heads"] {
            assert!(!ko.to_lowercase().contains(word), "{word:?} in {ko}");
        }
    }
}

/// Whether a note is the translated phrase `key`.
fn has_key(n: &llm_serving_calculator::core::base::error::Phrase, key: &str) -> bool {
    matches!(n, llm_serving_calculator::core::base::error::Phrase::Tr(k, _) if *k == key)
}

/// The builtin catalog with the A10G's published 16-bit peaks taken away (as the catalog had
/// it before a third-party figure was added): a GPU whose latency is only a lower bound.
fn catalog_without_a10g_peak() -> Catalog {
    use llm_serving_calculator::core::hardware::catalog::Peak;
    let mut c = Catalog {
        accelerators: Catalog::builtin().accelerators.clone(),
    };
    for a in c.accelerators.iter_mut().filter(|a| a.id == "a10g") {
        a.peaks.bf16 = Peak::NotPublished;
        a.peaks.fp16 = Peak::NotPublished;
    }
    c
}

/// Issue 16's case: Llama-3.1-8B, 1,024-token prompts, TTFT ≤ 500 ms (TPOT ≤ 50 ms, 10 req/s,
/// peak × 4) on the A10G and the L40S. The plan once read "best: A10G × 2 at batch 91" on an
/// A10G whose prefill was timed on bytes alone. Now the A10G has a dense peak: nothing is a
/// lower bound, and its TTFT includes compute (at least the bytes-only figure).
#[test]
fn the_issue_case_is_timed_in_full_or_says_it_is_not() {
    let m = model("meta-llama__Meta-Llama-3.1-8B");
    let inp = inputs(10.0, 4.0, &["a10g", "l40s"], 500.0, 50.0);
    let t = PerfTiming::new(&m);
    let p = capacity::plan(&inp, Catalog::builtin(), &t).unwrap_or_else(|e| panic!("{e}"));
    assert!(p.best.is_some());
    assert!(p.options.iter().all(|o| o.latency_lower_bound.is_none()));
    assert_eq!(p.best_lower_bound(), None);
    // The same A10G rows without its peak: every one flagged, and none faster than when timed
    // in full (compute only adds time).
    let bare = catalog_without_a10g_peak();
    let q = capacity::options(&inp, &bare, &t).unwrap_or_else(|e| panic!("{e}"));
    for o in q.options.iter().filter(|o| o.gpu == "a10g") {
        assert_eq!(
            o.latency_lower_bound,
            Some(capacity::LowerBound::NoComputePeak { dtype: Dtype::Bf16 })
        );
        let full = p
            .options
            .iter()
            .find(|x| x.gpu == "a10g" && x.tp == o.tp)
            .map(|x| t.times(gpu("a10g"), x.tp, 1, 1024, 256));
        let low = t.times(
            bare.get("a10g").unwrap_or_else(|e| panic!("{e}")),
            o.tp,
            1,
            1024,
            256,
        );
        if let (Some(Ok(full)), Ok(low)) = (full, low) {
            assert!(full.ttft.0 >= low.ttft.0, "TP {}", o.tp);
        }
        // So the batch meeting the targets is no larger once compute is timed.
        let timed = p.options.iter().find(|x| x.gpu == "a10g" && x.tp == o.tp);
        assert!(timed.is_some_and(|x| x.batch <= o.batch), "TP {}", o.tp);
    }
    // Ranked after every option timed in full that meets the targets; the best is timed in
    // full whenever one meets them, and a flagged option never wins without saying so.
    let first_flagged = q
        .options
        .iter()
        .position(|o| o.latency_lower_bound.is_some());
    let last_exact_viable = q.options.iter().rposition(|o| {
        o.meets_targets && o.reason != Some(Reason::CrossesNodes) && o.latency_lower_bound.is_none()
    });
    if let (Some(f), Some(e)) = (first_flagged, last_exact_viable) {
        assert!(e < f, "{e} < {f}");
    }
    match q.best_option() {
        Some(b) if b.latency_lower_bound.is_some() => {
            assert!(q
                .notes
                .iter()
                .any(|n| has_key(n, "phr_plan_best_lower_bound")));
        }
        _ => assert!(q
            .notes
            .iter()
            .all(|n| !has_key(n, "phr_plan_best_lower_bound"))),
    }
}

/// A catalog with a GPU lacking a compute peak, as the only candidate: the plan's best is
/// that GPU, and the verdict says its latency is a lower bound (typed flag, option note, plan
/// note, in both languages; the CLI's text says it too).
#[test]
fn a_gpu_without_a_compute_peak_is_flagged_in_the_verdict() {
    use llm_serving_calculator::core::base::i18n::Lang;
    let m = model("meta-llama__Meta-Llama-3.1-8B");
    let inp = inputs(10.0, 4.0, &["a10g"], 2000.0, 50.0);
    let bare = catalog_without_a10g_peak();
    let p = capacity::plan(&inp, &bare, &PerfTiming::new(&m)).unwrap_or_else(|e| panic!("{e}"));
    let b = p.best_option().unwrap_or_else(|| panic!("no best"));
    assert_eq!(b.gpu, "a10g");
    let lb = p.best_lower_bound();
    assert_eq!(
        lb,
        Some(capacity::LowerBound::NoComputePeak { dtype: Dtype::Bf16 })
    );
    assert!(b.notes.iter().any(|n| has_key(n, "phr_plan_lower_bound")));
    let note = p
        .notes
        .iter()
        .find(|n| has_key(n, "phr_plan_best_lower_bound"))
        .unwrap_or_else(|| panic!("{:?}", p.notes));
    let (en, ko) = (note.text(Lang::En), note.text(Lang::Ko));
    assert!(
        en.contains("NVIDIA A10G") && en.contains("lower-bound"),
        "{en}"
    );
    assert!(ko.contains("NVIDIA A10G") && ko.contains("하한"), "{ko}");
    // An option timed in full that meets the targets (the L40S) wins over a flagged one even
    // when the flagged one is cheaper; the flagged one says why it lost.
    let both = capacity::plan(
        &inputs(10.0, 4.0, &["a10g", "l40s"], 2000.0, 50.0),
        &bare,
        &PerfTiming::new(&m),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let best = both.best_option().unwrap_or_else(|| panic!("no best"));
    assert_eq!(best.latency_lower_bound, None);
    for o in both
        .options
        .iter()
        .filter(|o| o.gpu == "a10g" && o.meets_targets)
    {
        assert_eq!(o.reason, Some(Reason::LatencyLowerBound), "TP {}", o.tp);
    }
}

/// The CLI's text and JSON carry the flag for the builtin catalog's GPUs without a compute
/// peak (Apple M4 Max: no GPU TFLOPS published).
#[test]
fn the_cli_plan_shows_the_lower_bound() {
    let cfg = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/data/presets/meta-llama__Meta-Llama-3.1-8B.json"
    );
    let args: Vec<String> = [
        "plan",
        "--config",
        cfg,
        "--gpu",
        "m4-max",
        "--price",
        "1",
        "--rate",
        "1",
        "--input-len",
        "1024",
        "--output-len",
        "256",
        "--ttft-ms",
        "60000",
        "--tpot-ms",
        "1000",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = cli::run(&args, &mut out, &mut err);
    let text = String::from_utf8_lossy(&out);
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    assert!(
        text.contains("warning: the best option's latency is only a lower bound"),
        "{text}"
    );
    assert!(text.contains("publishes no dense bf16 peak"), "{text}");
    let mut json_args = args.clone();
    json_args.push("--json".into());
    let (mut out, mut err) = (Vec::new(), Vec::new());
    assert_eq!(cli::run(&json_args, &mut out, &mut err), 0);
    let v: serde_json::Value = serde_json::from_slice(&out).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(v[0]["latency_lower_bound"]["kind"], "no_compute_peak");
    assert_eq!(v[0]["latency_lower_bound"]["dtype"], "bf16");
    assert!(v[0]["reason"].is_null());
}
