//! Invariant checks shared by the fuzz targets.
//!
//! Each check panics (which libFuzzer reports as a crash and saves as an artifact) when a
//! parser breaks a promise: no panic, no NaN or infinity, no wrapped integer,
//! totals consistent with their components, every rejection a non-empty sentence, and a
//! URL that the app writes is a URL it reads back unchanged.

use llmcalc_core::base::dtype::Dtype;
use llmcalc_core::hardware::Architecture;
use llmcalc_core::base::error::CalcError;
use llmcalc_core::base::i18n::Lang;
use llmcalc_core::calc::memory::KvProfile;
use llmcalc_core::calc::weights;
use llmcalc_core::hardware::catalog::{Catalog, CustomAccelerator};
use llmcalc_core::model::config::parse_model_text;
use llmcalc_core::model::{Mixer, ModelDesc, ModelOrigin, ParamBreakdown};
use llmcalc_core::present::report::evaluate;
use llmcalc_core::scenario::{
    limits, BudgetRule, GpuChoice, ModelSource, Scenario, MAX_GPUS,
};

/// Inputs larger than this (bytes) are parsed but not run through the whole report, to keep
/// the executions per second high.
const EVALUATE_LIMIT_BYTES: usize = 64 * 1024;

/// A rejection must read as a non-empty sentence in every language.
pub fn check_error(e: &CalcError) {
    for lang in Lang::ALL {
        let m = e.message(*lang);
        assert!(!m.trim().is_empty(), "empty {lang:?} message for {e:?}");
    }
}

/// The components add up to the total exactly (no wrap), and the sub-totals fit inside it
/// (`ParamBreakdown::check_sums`, the same check the tests run).
pub fn check_breakdown(p: &ParamBreakdown) {
    if let Err(e) = p.check_sums() {
        panic!("{e}");
    }
}

/// Checks a parsed model and what the core computes from it.
pub fn check_model(m: &ModelDesc) {
    check_breakdown(&m.params);
    if m.origin == ModelOrigin::Config {
        assert!(
            m.hidden_size >= 1 && m.vocab_size >= 1,
            "zero size accepted: {m:?}"
        );
        assert!(!m.layers.is_empty(), "a config with no layers was accepted");
        assert!(
            m.params.total > 0,
            "a config with zero parameters was accepted"
        );
        for l in &m.layers {
            match &l.mixer {
                Mixer::Attention {
                    num_heads,
                    kv_heads,
                    head_dim,
                    window,
                    ..
                } => {
                    assert!(*num_heads >= 1 && *kv_heads >= 1 && *head_dim >= 1, "{l:?}");
                    assert!(kv_heads <= num_heads && num_heads % kv_heads == 0, "{l:?}");
                    assert!(window.is_none_or(|w| w >= 1), "zero window: {l:?}");
                }
                Mixer::Mla {
                    num_heads,
                    kv_lora_rank,
                    ..
                } => {
                    assert!(*num_heads >= 1 && *kv_lora_rank >= 1, "{l:?}");
                }
                Mixer::Ssm { .. } => {}
            }
        }
        // TP 1 divides everything: the KV profile must build, and grow with length and batch.
        match KvProfile::from_model(m, Dtype::Bf16, 1, Architecture::Unknown) {
            Ok(kv) => {
                let (a, b, c) = (
                    kv.per_request(1),
                    kv.per_request(4096),
                    kv.per_request(1 << 20),
                );
                assert!(
                    a <= b && b <= c,
                    "KV shrinks with context: {a:?} {b:?} {c:?}"
                );
                assert!(kv.per_batch(2, 4096) >= b, "KV shrinks with batch");
            }
            Err(e) => panic!("KV profile failed at TP 1: {e}"),
        }
    }
    for tp in [1u64, 8] {
        match weights::checkpoint(m, tp) {
            Ok(w) => assert!(
                w.per_gpu <= w.total,
                "per-GPU weights exceed the total at TP {tp}"
            ),
            Err(e) => check_error(&e),
        }
    }
}

/// Parses pasted text as the app does (config.json or safetensors index) and checks the
/// result; small inputs also go through the whole report with the default scenario.
pub fn check_model_text(text: &str) {
    match parse_model_text(text) {
        Ok(m) => check_model(&m),
        Err(e) => check_error(&e),
    }
    if text.len() <= EVALUATE_LIMIT_BYTES {
        let s = Scenario {
            model: ModelSource::Pasted(text.to_string()),
            ..Scenario::default()
        };
        match evaluate(&s, Catalog::builtin()) {
            Ok(r) => check_report(&r),
            Err(e) => check_error(&e),
        }
    }
}

/// The first `NaN`, `inf` or `-inf` number in a value's `Debug` text, outside string
/// literals (user text such as a model name may legitimately say "NaN").
pub fn non_finite_in_debug(debug: &str) -> Option<String> {
    let mut outside = String::with_capacity(debug.len());
    let (mut in_str, mut escaped) = (false, false);
    for ch in debug.chars() {
        if in_str {
            if escaped {
                escaped = false;
            } else if ch == '\\' {
                escaped = true;
            } else if ch == '"' {
                in_str = false;
            }
            continue;
        }
        if ch == '"' {
            in_str = true;
            outside.push(' ');
        } else {
            outside.push(ch);
        }
    }
    let word = |c: char| c.is_alphanumeric() || c == '_';
    for tok in ["NaN", "inf"] {
        for (i, _) in outside.match_indices(tok) {
            let before = outside[..i].chars().next_back().is_some_and(word);
            let after = outside[i + tok.len()..].chars().next().is_some_and(word);
            if !before && !after {
                let from = outside.floor_char_boundary(i.saturating_sub(80));
                return Some(outside[from..i + tok.len()].to_string());
            }
        }
    }
    None
}

fn check_report(r: &llmcalc_core::present::report::Report) {
    if let Some(at) = non_finite_in_debug(&format!("{r:?}")) {
        panic!("the report holds a non-finite number: …{at}");
    }
}

fn in_range(n: u64, r: (u64, u64)) -> bool {
    n >= r.0 && n <= r.1
}

/// Every value of a scenario read from a URL is within the documented limits.
pub fn check_scenario(s: &Scenario) {
    assert!(
        !s.gpus.is_empty() && s.gpus.len() <= MAX_GPUS,
        "{} GPUs",
        s.gpus.len()
    );
    assert!(in_range(u64::from(s.tp), limits::TP), "tp {}", s.tp);
    assert!(
        in_range(s.context_len, limits::CONTEXT_LEN),
        "ctx {}",
        s.context_len
    );
    assert!(
        in_range(s.concurrency, limits::CONCURRENCY),
        "n {}",
        s.concurrency
    );
    assert!(
        in_range(s.perf.input_len, limits::PERF_LEN),
        "in {}",
        s.perf.input_len
    );
    assert!(
        in_range(s.perf.output_len, limits::PERF_LEN),
        "out {}",
        s.perf.output_len
    );
    assert!(
        in_range(s.perf.batch, limits::BATCH),
        "batch {}",
        s.perf.batch
    );
    if let BudgetRule::Vllm {
        gpu_memory_utilization: g,
        block_size: b,
    } = s.budget
    {
        assert!(
            g.is_finite() && g >= limits::GMU.0 && g <= limits::GMU.1,
            "gmu {g}"
        );
        assert!(in_range(u64::from(b), limits::BLOCK_SIZE), "bs {b}");
    }
    if let ModelSource::Quick { params, .. } = s.model {
        assert!(in_range(params, limits::PARAMS), "params {params}");
    }
    for g in &s.gpus {
        if let GpuChoice::Custom(c) = g {
            if let Err(e) = c.validate() {
                panic!("a custom GPU that fails validation came from the URL: {e}");
            }
        }
    }
}

/// Reads a URL query as the app does, checks the scenario, its notices, the round trip
/// `from_query(to_query(s)) == s`, and (for a quarter of the small queries) the whole report.
pub fn check_query(q: &str) {
    let (s, notices) = Scenario::from_query(q);
    check_scenario(&s);
    for n in &notices {
        assert!(
            n.param.chars().count() <= 40,
            "notice names a {}-char param",
            n.param.len()
        );
        for lang in Lang::ALL {
            assert!(!n.message(*lang).trim().is_empty(), "empty notice {n:?}");
        }
    }
    let q2 = s.to_query();
    let (s2, n2) = Scenario::from_query(&q2);
    assert!(
        n2.is_empty(),
        "to_query wrote {q2:?}, which from_query rejects: {n2:?}"
    );
    // A pasted config travels minified, so only the config text may differ after one trip.
    match (&s.model, &s2.model) {
        (ModelSource::Pasted(_), ModelSource::Pasted(_)) => {
            let mut s1 = s.clone();
            s1.model = s2.model.clone();
            assert_eq!(s1, s2, "round trip changed the scenario through {q2:?}");
        }
        _ => assert_eq!(s, s2, "round trip changed the scenario through {q2:?}"),
    }
    let (s3, n3) = Scenario::from_query(&s2.to_query());
    assert!(
        n3.is_empty() && s3 == s2,
        "second round trip differs: {n3:?}"
    );

    // The whole report costs about a millisecond; computing it for one query length in
    // four keeps the parser's executions per second high.
    if q.len() <= EVALUATE_LIMIT_BYTES && q.len().is_multiple_of(4) {
        let mut s = s;
        let catalog = Catalog::builtin();
        let _ = s.sanitize(catalog, |id| {
            llmcalc_core::model::presets::get(id).is_some()
        });
        match evaluate(&s, catalog) {
            Ok(r) => check_report(&r),
            Err(e) => check_error(&e),
        }
    }
}

/// A custom accelerator string (`name=…;memory_gib=…`) parsed and validated: any accepted
/// value is finite and within its range, and its own query reads back unchanged.
pub fn check_custom(q: &str) {
    match CustomAccelerator::from_query(q) {
        Ok(c) => match c.validate() {
            Ok(a) => {
                assert!(c.memory_gib.is_finite() && c.memory_gib > 0.0, "{c:?}");
                assert!(
                    c.bandwidth_gbps.is_finite() && c.bandwidth_gbps > 0.0,
                    "{c:?}"
                );
                assert!(c.bf16_tflops.is_finite() && c.bf16_tflops > 0.0, "{c:?}");
                assert!(a.bandwidth.0.is_finite() && a.bandwidth.0 > 0.0, "{a:?}");
                let back = CustomAccelerator::from_query(&c.to_query());
                assert_eq!(
                    back.as_ref().ok(),
                    Some(&c),
                    "custom GPU round trip: {back:?}"
                );
            }
            Err(e) => check_error(&e),
        },
        Err(e) => check_error(&e),
    }
}
