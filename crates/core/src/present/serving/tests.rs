use super::*;
use crate::scenario::DatasetKind;
use crate::scenario::GpuChoice;
use crate::sim::step_time::StepModel;
use crate::sim::workload::Lengths;

fn small_query(gpus: &[&str]) -> String {
    let mut s = Scenario {
        gpus: gpus
            .iter()
            .map(|g| GpuChoice::Catalog((*g).into()))
            .collect(),
        ..Scenario::default()
    };
    s.views.serving.num_requests = 300;
    s.views.serving.warmup = 20;
    s.to_query()
}

#[test]
fn an_all_at_once_run_survives_the_trip_through_json() {
    // JSON has no infinity: the chosen run's rate (and any statistic that is not a
    // finite number) must still decode on the page's side.
    let mut s = Scenario::from_query(&small_query(&["h100-sxm"])).0;
    s.views.serving.arrival = crate::scenario::ArrivalKind::Inf;
    let job = ServingJob {
        id: 3,
        query: s.to_query(),
        lang: "en".into(),
        kind: JobKind::Sweep,
        text: String::new(),
    };
    let text = serde_json::to_string(&job).unwrap_or_default();
    let reply: WorkerReply =
        serde_json::from_str(&run_job_json(&text)).unwrap_or_else(|e| panic!("{e}"));
    match reply {
        WorkerReply::Done { view, .. } => {
            let g = &view.gpus[0];
            assert!(g.chosen_rate.is_infinite(), "{}", g.chosen_rate);
            assert!(!g.chosen.is_empty());
        }
        other => panic!("expected a result, got {other:?}"),
    }
}

#[test]
fn job_round_trips_through_json_and_answers_its_id() {
    let job = ServingJob {
        id: 7,
        query: small_query(&["h100-sxm"]),
        lang: "en".into(),
        kind: JobKind::Sweep,
        text: String::new(),
    };
    let text = serde_json::to_string(&job).unwrap_or_default();
    let back: ServingJob = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(back, job);
    let reply: WorkerReply =
        serde_json::from_str(&run_job_json(&text)).unwrap_or_else(|e| panic!("{e}"));
    match reply {
        WorkerReply::Done { id, view } => {
            assert_eq!(id, 7);
            assert_eq!(view.gpus.len(), 1);
        }
        other => panic!("expected a result, got {other:?}"),
    }
}

#[test]
fn garbage_gets_a_failure_with_id_zero() {
    let reply: WorkerReply =
        serde_json::from_str(&run_job_json("{nope")).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(reply, WorkerReply::Failed { id: 0, .. }));
}

#[test]
fn sweep_brackets_the_knee_and_latency_rises_past_it() {
    let v = run_job(
        &small_query(&["h100-sxm", "l40s"]),
        Lang::En,
        Catalog::builtin(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(v.gpus.len(), 2, "{:?}", v.errors);
    for g in &v.gpus {
        assert_eq!(g.points.len(), SWEEP_FRACTIONS.len());
        // The analytic estimate is within a factor of two of the simulated capacity,
        // so the swept rates (0.1–1.5 × the estimate) reach the knee.
        let ratio = g.saturation_rate / g.analytic_rate;
        assert!((0.5..2.0).contains(&ratio), "{}: {ratio}", g.name);
        let first = &g.points[0];
        let last = &g.points[g.points.len() - 1];
        assert!(last.rate > first.rate);
        assert!(last.ttft.p99 >= first.ttft.p99, "{}", g.name);
        assert!(g.points.iter().all(|p| p.ttft.p99 >= p.ttft.p50));
        assert!(!g.series.is_empty());
        // The chosen run is automatic: 80% of the simulated saturation rate.
        let want = g.saturation_rate * AUTO_RATE_FRACTION;
        assert!((g.chosen_rate - want).abs() <= 1e-9 * want.max(1.0));
    }
    // A faster GPU saturates later.
    assert!(v.gpus[0].saturation_rate > v.gpus[1].saturation_rate);
    assert!(v.math.is_some());
}

/// With the toggle on every run is disaggregated: the chosen run carries both pools (the
/// link NVLink, three GPUs fitting one H100 node), the sweep still brackets its knee, and
/// the view's table has a column for the GPU.
#[test]
fn a_disaggregated_sweep_shows_both_pools() {
    let mut s = Scenario::from_query(&small_query(&["h100-sxm"])).0;
    s.views.serving.disagg = true;
    s.views.serving.decode_workers = 2;
    let v = run_job(&s.to_query(), Lang::En, Catalog::builtin()).unwrap_or_else(|e| panic!("{e}"));
    let g = &v.gpus[0];
    let d = g.disagg.as_ref().unwrap_or_else(|| panic!("no pools"));
    assert_eq!(
        (
            d.prefill_workers,
            d.prefill_gpus,
            d.decode_workers,
            d.decode_gpus
        ),
        (1, 1, 2, 1)
    );
    assert_eq!(d.link, crate::sim::disagg::KvLink::Nvlink);
    assert!(d.prefill_busy > 0.0 && d.decode_busy > 0.0, "{d:?}");
    assert!(
        d.transfer_ms.mean > 0.0 && d.kv_bytes_per_gpu > 0.0,
        "{d:?}"
    );
    let ratio = g.saturation_rate / g.analytic_rate;
    assert!((0.5..2.0).contains(&ratio), "{ratio}");
    assert!(
        g.notes.iter().any(|n| n.starts_with("Disaggregated")),
        "{:?}",
        g.notes
    );
    assert_eq!(v.disagg_columns().len(), 1);
    // Off: one replica, no pools.
    s.views.serving.disagg = false;
    let v = run_job(&s.to_query(), Lang::En, Catalog::builtin()).unwrap_or_else(|e| panic!("{e}"));
    assert!(v.disagg_columns().is_empty());
}

#[test]
fn step_math_equals_the_step_model_at_batch_one() {
    let s = Scenario::default();
    let model = scenario_model(&s).unwrap_or_else(|e| panic!("{e}"));
    let gpu = Catalog::builtin()
        .get("h100-sxm")
        .cloned()
        .unwrap_or_else(|e| panic!("{e}"));
    let mut s1 = s.clone();
    s1.views.serving.max_num_seqs = 1;
    let engine = engine_config(&s1);
    let (_, (b, ctx, t)) = analytic_capacity(&model, &gpu, &engine, &s1, &workload(&s1))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(b, 1);
    let mut steps = StepModel::new(
        &model,
        &gpu,
        &engine.perf_workload(),
        &s1.views.eff,
        engine
            .resolve(&model, &gpu)
            .map(|r| r.max_model_len)
            .unwrap_or(1),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    steps.begin();
    steps.add_decode(ctx);
    assert_eq!(steps.finish(1, 1), t);
}

#[test]
fn idle_data_parallel_ranks_add_no_capacity() {
    // Two clients over attention-DP 2 and 4 of a dense model: two ranks serve one client
    // each either way, so the estimate is the same. Without a client cap every rank fills
    // its batch, and DP 4 serves about twice what DP 2 does.
    let model = scenario_model(&Scenario::default()).unwrap_or_else(|e| panic!("{e}"));
    let gpu = Catalog::builtin()
        .get("h100-sxm")
        .cloned()
        .unwrap_or_else(|e| panic!("{e}"));
    let rate = |dp: u64, clients: Option<u64>| {
        let mut s = Scenario::default();
        s.views.serving.dp = dp;
        let engine = engine_config(&s);
        let mut wl = workload(&s);
        wl.max_concurrency = clients;
        analytic_capacity(&model, &gpu, &engine, &s, &wl)
            .unwrap_or_else(|e| panic!("{e}"))
            .0
    };
    assert_eq!(rate(2, Some(2)), rate(4, Some(2)));
    let (two, four) = (rate(2, None), rate(4, None));
    assert!((four / two - 2.0).abs() < 0.01, "{four} {two}");
}

#[test]
fn inputs_map_to_vllm_flags() {
    let mut s = Scenario::default();
    s.views.serving.max_num_seqs = 64;
    s.views.serving.arrival = ArrivalKind::Bursty;
    s.views.serving.burstiness_cv = 2.0;
    s.views.serving.dataset = DatasetKind::Uniform;
    let e = engine_config(&s);
    assert_eq!(e.max_num_seqs, Some(64));
    assert_eq!(e.max_num_batched_tokens, None);
    // 0 is vLLM's own CUDA-graph rule; a size set in the section is the launch's.
    assert_eq!(e.max_cudagraph_capture_size, None);
    s.views.serving.cudagraph_capture = 2048;
    assert_eq!(engine_config(&s).max_cudagraph_capture_size, Some(2048));
    let w = workload(&s);
    assert_eq!(
        w.arrival,
        Arrival::Gamma {
            rate: 1.0,
            burstiness: 0.25
        }
    );
    let Lengths::Uniform { input, .. } = w.lengths else {
        panic!("uniform expected")
    };
    assert!(input.0 < s.perf.input_len && input.1 > s.perf.input_len);
}
