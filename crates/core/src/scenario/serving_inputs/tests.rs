use super::*;

fn read(q: &[String]) -> (ServingInputs, usize) {
    crate::scenario::read_parts(q, ServingInputs::set)
}

/// Speculative decoding round-trips through the URL; a length that does not fit the
/// drafts, and a method the simulator lacks, are refused and leave the inputs as they were;
/// its fields are shown only when it is on.
#[test]
fn speculative_decoding_in_the_url() {
    let mut v = ServingInputs {
        spec: Some(SpecMethod::Eagle3),
        spec_k: 2,
        spec_length: 2.2,
        ..ServingInputs::default()
    };
    let q = v.query_parts();
    assert!(q.contains(&"sv_spec=eagle3".to_string()), "{q:?}");
    assert_eq!(read(&q), (v, 0));
    let before = v;
    assert_eq!(v.set("sv_spec_al", "3.5"), Err(NoticeKind::OutOfRange));
    assert_eq!(
        ServField::SpecLength.refusal_key(&v, 3.5),
        Some("sv_err_spec_length")
    );
    assert_eq!(v.set("sv_spec", "draft"), Err(NoticeKind::Invalid));
    assert_eq!(v, before);
    assert!(ServField::SpecK.shown(&v));
    v.spec = None;
    assert!(!ServField::SpecK.shown(&v) && !ServField::SpecLength.shown(&v));
    assert!(ServField::Rate.shown(&v));
}

/// Disaggregation round-trips through the URL; 0 or 257 workers, a link the simulator
/// lacks and a toggle that is neither 0 nor 1 are refused and leave the inputs as they were;
/// its fields are shown only when it is on.
#[test]
fn disaggregation_in_the_url() {
    let mut v = ServingInputs {
        disagg: true,
        prefill_workers: 1,
        decode_workers: 2,
        decode_tp: 2,
        kv_link: Some(KvLink::Nvlink),
        ..ServingInputs::default()
    };
    let q = v.query_parts();
    for p in ["sv_disagg=1", "sv_dw=2", "sv_dtp=2", "sv_kvl=nvlink"] {
        assert!(q.contains(&p.to_string()), "{p} in {q:?}");
    }
    assert_eq!(read(&q), (v, 0));
    let before = v;
    for (k, val, kind) in [
        ("sv_pw", "0", NoticeKind::OutOfRange),
        ("sv_dw", "257", NoticeKind::OutOfRange),
        ("sv_dw", "1.5", NoticeKind::Invalid),
        ("sv_pw", "many", NoticeKind::Invalid),
        ("sv_ptp", "65", NoticeKind::OutOfRange),
        ("sv_kvl", "ethernet", NoticeKind::Invalid),
        ("sv_kvl", "infiniband", NoticeKind::Invalid),
        ("sv_disagg", "yes", NoticeKind::Invalid),
    ] {
        assert_eq!(v.set(k, val), Err(kind), "{k}={val}");
    }
    assert_eq!(v, before);
    assert_eq!(v.set("sv_kvl", "auto"), Ok(()));
    assert_eq!(v.kv_link, None);
    assert!(ServField::PrefillWorkers.shown(&v) && ServField::DecodeTp.shown(&v));
    v.disagg = false;
    assert!(ServField::ALL
        .iter()
        .filter(|f| f.disaggregation())
        .all(|f| !f.shown(&v)));
    assert!(!v.query_parts().contains(&"sv_disagg=1".to_string()));
    assert!(ServingInputs::owns("sv_disagg") && ServingInputs::owns("sv_kvl"));
}

#[test]
fn default_writes_nothing() {
    assert!(ServingInputs::default().query_parts().is_empty());
}

#[test]
fn every_field_round_trips() {
    let v = ServingInputs {
        max_num_seqs: 128,
        max_num_batched_tokens: 4096,
        block_size: 32,
        gpu_memory_utilization: 0.85,
        prefix_hit: 0.25,
        frontend_overhead_ms: 12.5,
        cudagraph_capture: 1024,
        arrival: ArrivalKind::Bursty,
        burstiness_cv: 2.0,
        max_concurrency: 8,
        dataset: DatasetKind::ShareGpt,
        num_requests: 500,
        warmup: 20,
        rate: 3.5,
        router: Router::LeastLoaded,
        engine: EngineKind::Vllm,
        dp: 2,
        ep: 16,
        pp: 2,
        nodes: 4,
        spec: Some(SpecMethod::Mtp),
        spec_k: 4,
        spec_length: 2.5,
        disagg: true,
        prefill_workers: 2,
        decode_workers: 6,
        prefill_tp: 2,
        decode_tp: 4,
        kv_link: Some(KvLink::Roce),
    };
    let q = v.query_parts();
    assert_eq!(read(&q), (v, 0));
}

/// The engine round-trips, first in the query; a server path left at the engine's default
/// writes nothing and follows the engine, one set by hand stays.
#[test]
fn the_engine_round_trips_and_carries_its_server_path() {
    for e in [EngineKind::Sglang, EngineKind::Trtllm] {
        let mut v = ServingInputs::default();
        v.set_engine(e);
        assert_eq!(v.frontend_overhead_ms, engine_frontend_overhead_ms(e));
        let q = v.query_parts();
        assert_eq!(q, vec![format!("sv_engine={}", e.id())]);
        assert_eq!(read(&q), (v, 0));
        v.frontend_overhead_ms = 7.5;
        v.max_num_seqs = 64;
        let q = v.query_parts();
        assert_eq!(q.first(), Some(&format!("sv_engine={}", e.id())));
        assert_eq!(read(&q), (v, 0));
        v.set_engine(EngineKind::Vllm);
        assert_eq!(
            v.frontend_overhead_ms, 7.5,
            "{e:?}: a path set by hand stays"
        );
    }
    assert!(!ServField::BlockSize.applies(EngineKind::Sglang));
    assert!(ServField::MaxNumSeqs.applies(EngineKind::Trtllm));
    assert_eq!(
        ServField::MaxNumSeqs.label_key_for(EngineKind::Trtllm),
        "sv_max_batch_size"
    );
}

#[test]
fn warmup_and_count_round_trip_in_either_direction() {
    for (n, w) in [(50, 10), (20_000, 5_000), (40, 39)] {
        let v = ServingInputs {
            num_requests: n,
            warmup: w,
            ..ServingInputs::default()
        };
        assert_eq!(read(&v.query_parts()), (v, 0), "n={n} w={w}");
    }
}

#[test]
fn bad_values_are_refused_and_leave_the_value() {
    let mut v = ServingInputs::default();
    for (k, val, kind) in [
        ("sv_mns", "abc", NoticeKind::Invalid),
        ("sv_mns", "2.5", NoticeKind::Invalid),
        ("sv_gmu", "1.5", NoticeKind::OutOfRange),
        ("sv_gmu", "NaN", NoticeKind::Invalid),
        ("sv_rate", "-1", NoticeKind::OutOfRange),
        ("sv_n", "1e9", NoticeKind::OutOfRange),
        ("sv_warm", "2000", NoticeKind::OutOfRange),
        ("sv_arr", "sometimes", NoticeKind::Invalid),
        ("sv_ds", "", NoticeKind::Invalid),
        ("sv_router", "random", NoticeKind::Invalid),
        ("sv_engine", "tgi", NoticeKind::Invalid),
    ] {
        assert_eq!(v.set(k, val), Err(kind), "{k}={val}");
    }
    assert_eq!(v, ServingInputs::default());
    assert_eq!(v.set("sv_zz", "1"), Err(NoticeKind::UnknownParam));
}

#[test]
fn every_refusal_beyond_the_range_has_a_sentence() {
    let v = ServingInputs::default();
    for f in ServField::ALL {
        let (lo, hi) = f.range();
        // Every value the check refuses inside the range names why.
        for x in [
            lo,
            (lo + hi) / 2.0,
            lo + 0.5,
            hi,
            v.num_requests as f64,
            v.warmup as f64,
        ] {
            if !(lo..=hi).contains(&x) {
                continue;
            }
            let refused = f.check(&v, x).is_err();
            assert_eq!(refused, f.refusal_key(&v, x).is_some(), "{f:?} = {x}");
        }
    }
    assert_eq!(
        ServField::MaxNumSeqs.refusal_key(&v, 2.5),
        Some("sv_err_whole")
    );
    assert_eq!(
        ServField::Warmup.refusal_key(&v, 2000.0),
        Some("sv_err_warmup")
    );
    assert_eq!(
        ServField::NumRequests.refusal_key(&v, 100.0),
        Some("sv_err_requests")
    );
    assert_eq!(ServField::GpuMemoryUtilization.refusal_key(&v, 0.5), None);
}
