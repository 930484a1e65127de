//! "Show the math" in Korean shows no English words: every derivation the app can show (the
//! report's headline numbers, the analysis views, the planner, the planner's simulated
//! replicas, the serving section) writes its formula, substituted values and result with
//! symbols, numbers and units only, and a result that needs a word carries the key of a
//! translated row (`Derivation::result_key`).
//!
//! The derivations are found in the `Debug` text of everything those computations return, so
//! a derivation added to any of them is checked without naming it here; the test also checks
//! that it found the derivations it must find (a scan that finds nothing proves nothing), and
//! that its word finder finds the words the old derivations wrote.

#![cfg(not(target_arch = "wasm32"))]

use llm_serving_calculator::core::base::derivation::Term;
use llm_serving_calculator::core::base::{has, tr, Derivation, Lang, Source};
use llm_serving_calculator::core::hardware::catalog::Catalog;
use llm_serving_calculator::core::present::report;
use llm_serving_calculator::core::present::views;
use llm_serving_calculator::core::present::{run_job, run_plan_job};
use llm_serving_calculator::core::scenario::Scenario;
use std::collections::{BTreeMap, BTreeSet};

/// Letter runs that are units, function names or acronyms both languages write the same way,
/// not words of a language. A derivation's own symbols (its terms' and the one its formula
/// defines) are allowed where they stand; everything else of three letters or more is a word.
#[rustfmt::skip]
const ALLOWED: &[&str] = &[
    // Units.
    "kB", "KB", "MB", "GB", "TB", "KiB", "MiB", "GiB", "TiB",
    "FLOP", "FLOPs", "GFLOP", "TFLOP", "PFLOP", "tok", "USD",
    // Functions.
    "min", "max", "ceil", "floor", "log", "exp", "sqrt",
    // Acronyms.
    "TTFT", "TPOT", "ITL", "TDP", "HBM", "MLP", "MoE", "SSM", "MLA", "GPU", "LLM",
];

/// The runs of three or more ASCII letters in `text` that [`ALLOWED`] does not list, outside
/// subscripted symbols: a token with `_` (`KV_req`, `block_size`, `H_kv,rank`) is a symbol
/// with its subscripts, named by the derivation's terms or title.
fn english_words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut token = String::new();
    let chars: Vec<char> = text.chars().chain(std::iter::once(' ')).collect();
    for (i, &c) in chars.iter().enumerate() {
        let subscript_comma = c == ','
            && token.contains('_')
            && chars.get(i + 1).is_some_and(|n| n.is_alphanumeric());
        if c.is_alphanumeric() || c == '_' || subscript_comma {
            token.push(c);
            continue;
        }
        if !token.contains('_') {
            for run in token.split(|c: char| !c.is_ascii_alphabetic()) {
                if run.len() >= 3 && !ALLOWED.contains(&run) {
                    words.push(run.to_string());
                }
            }
        }
        token.clear();
    }
    words
}

/// A string field of a `Debug` line (`name: "…",`), unescaped.
fn debug_field(line: &str, name: &str) -> Option<String> {
    let rest = line.trim().strip_prefix(name)?.strip_prefix(": ")?;
    let lit = rest.strip_suffix(',').unwrap_or(rest);
    let inner = lit.strip_prefix('"')?.strip_suffix('"')?;
    let mut out = String::new();
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('t') => out.push('\t'),
            Some('u') => {
                let code: String = chars.by_ref().skip(1).take_while(|&c| c != '}').collect();
                let c = u32::from_str_radix(&code, 16)
                    .ok()
                    .and_then(char::from_u32)
                    .unwrap_or('\u{fffd}');
                out.push(c);
            }
            Some(c) => out.push(c),
            None => {}
        }
    }
    Some(out)
}

/// Every `Derivation` in a pretty `Debug` text, rebuilt from its fields (terms: symbol and
/// unit only).
fn derivations_in(debug: &str) -> Vec<Derivation> {
    let lines: Vec<&str> = debug.lines().collect();
    let mut found = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if !line.trim_end().ends_with("Derivation {") {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let mut d = Derivation::default();
        let mut source_kind: Option<&str> = None;
        for l in &lines[i + 1..] {
            let li = l.len() - l.trim_start().len();
            if li <= indent {
                break;
            }
            if li == indent + 4 {
                for (name, slot) in [
                    ("title_key", &mut d.title_key),
                    ("formula", &mut d.formula),
                    ("substituted", &mut d.substituted),
                    ("result", &mut d.result),
                    ("result_key", &mut d.result_key),
                ] {
                    if let Some(v) = debug_field(l, name) {
                        *slot = v;
                    }
                }
            } else if li == indent + 12 {
                // A term's fields (terms: [ Term { symbol … } ]).
                if let Some(v) = debug_field(l, "symbol") {
                    d.terms.push(Term::new(
                        &v,
                        "",
                        String::new(),
                        "",
                        Source::User(String::new()),
                    ));
                } else if let Some(t) = d.terms.last_mut() {
                    if let Some(v) = debug_field(l, "name_key") {
                        t.name_key = v;
                    } else if let Some(v) = debug_field(l, "value") {
                        t.value = v;
                    } else if let Some(v) = debug_field(l, "unit") {
                        t.unit = v;
                    } else if let Some(kind) = l.trim().strip_prefix("source: ") {
                        source_kind = Some(kind.trim_end_matches('('));
                    }
                }
            } else if let (true, Some(kind), Some(t)) =
                (li == indent + 16, source_kind.take(), d.terms.last_mut())
            {
                // The source's detail, one line below its kind.
                let detail = debug_field(&format!("x: {}", l.trim()), "x").unwrap_or_default();
                t.source = match kind {
                    "Derived" => Source::Derived(detail),
                    "Default" => Source::Default(detail),
                    "ConfigKey" => Source::ConfigKey(detail),
                    "Catalog" => Source::Catalog(detail),
                    _ => Source::User(detail),
                };
            }
        }
        found.push(d);
    }
    found
}

/// A term's unit as the math panel shows it: its row when it is a key, else as written.
fn unit_shown(lang: Lang, unit: &str) -> String {
    if has(unit) {
        tr(lang, unit).to_string()
    } else {
        unit.to_string()
    }
}

/// The symbols a derivation's terms define, longest first; with `lhs`, also the quantity its
/// formula defines (left of the first ` = `), which only the formula may name by its symbol.
fn symbols(d: &Derivation, lhs: bool) -> Vec<String> {
    let mut s: Vec<String> = d.terms.iter().map(|t| t.symbol.clone()).collect();
    if let (true, Some((left, _))) = (lhs, d.formula.split_once(" = ")) {
        s.push(left.trim().to_string());
    }
    s.retain(|x| !x.is_empty());
    s.sort_by_key(|x| std::cmp::Reverse(x.chars().count()));
    s
}

/// `text` with each of `symbols` where it stands as a whole (not inside a longer identifier)
/// blanked out.
fn without_symbols(text: &str, symbols: &[String]) -> String {
    let ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut t = text.to_string();
    for sym in symbols {
        let mut out = String::new();
        let mut rest = t.as_str();
        while let Some(i) = rest.find(sym.as_str()) {
            let before = rest[..i].chars().next_back();
            let after = rest[i + sym.len()..].chars().next();
            out.push_str(&rest[..i]);
            if before.is_some_and(ident) || after.is_some_and(ident) {
                out.push_str(sym);
            } else {
                out.push(' ');
            }
            rest = &rest[i + sym.len()..];
        }
        out.push_str(rest);
        t = out;
    }
    t
}

/// The English words of one derivation as the Korean page shows it: (word, where, text).
/// Also reported: a term whose name, or a result whose words, have no row (the page would
/// show the key).
fn words_of(d: &Derivation) -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut flag = |what: &str, at: &str, text: &str| {
        out.push((
            what.to_string(),
            format!("{} {at}", d.title_key),
            text.to_string(),
        ));
    };
    if !d.result_key.is_empty() && !has(&d.result_key) {
        flag(&d.result_key, "result key without a row", &d.result);
    }
    let (lhs, terms) = (symbols(d, true), symbols(d, false));
    let mut parts: Vec<(&str, String, &[String])> = vec![
        ("formula", d.formula.clone(), &lhs),
        ("substituted", d.substituted.clone(), &terms),
        ("result", d.result_text(Lang::Ko), &terms),
    ];
    for t in &d.terms {
        parts.push(("term unit", unit_shown(Lang::Ko, &t.unit), &[]));
        parts.push(("term value", t.value.clone(), &[]));
        if !has(&t.name_key) {
            flag(&t.name_key, "term name without a row", &t.symbol);
        }
        // How a value was derived, or why a default applies, is a row, or an identifier (a
        // dtype, an engine flag: `bf16`, `max_num_seqs`), never a sentence.
        if let Source::Derived(k) | Source::Default(k) = &t.source {
            let identifier = k
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.');
            if !has(k) && !identifier {
                flag(k, "term source without a row", &t.symbol);
            }
        }
    }
    for (part, text, symbols) in parts {
        for w in english_words(&without_symbols(&text, symbols)) {
            flag(&w, part, &text);
        }
    }
    out
}

/// The words found, one line each: the word, where it was found, and one text holding it.
fn summary(found: &[(String, String, String)]) -> String {
    let mut words: BTreeMap<&str, (BTreeSet<&str>, &str)> = BTreeMap::new();
    for (w, at, text) in found {
        let e = words.entry(w).or_insert_with(|| (BTreeSet::new(), text));
        e.0.insert(at);
    }
    words
        .iter()
        .map(|(w, (at, text))| {
            let at: Vec<&str> = at.iter().copied().collect();
            format!("{w:?} in {}, e.g. {text:?}", at.join(", "))
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Scenarios: the snapshots' app scenarios, a multimodal model, a MoE with MXFP4 experts, a
/// hybrid SSM model, each with the planner's traffic and targets set.
const SCENARIOS: &[&str] = &[
    "",
    "gpu=a10g&gpu=l40s&ctx=4096",
    "gpu=a10g&gpu=l40s&ctx=4096&rule=vllm&gmu=0.9&bs=16",
    "model=meta-llama__Meta-Llama-3.1-70B&gpu=h100-sxm&tp=4&wd=fp8&kvd=fp8&ctx=8192&n=16",
    "model=mistralai__Mixtral-8x7B-v0.1&gpu=a100-80gb&gpu=h100-sxm&tp=2&ctx=2048&n=32",
    "model=deepseek-ai__DeepSeek-V3&gpu=h200&tp=8&ctx=16384&n=4",
    "model=google__gemma-3-27b-it&gpu=h100-sxm&gpu=l40s&ctx=8192",
    "model=openai__gpt-oss-120b&gpu=h100-sxm&gpu=b200&ctx=8192",
    "model=nvidia__Nemotron-H-56B-Base-8K&gpu=h100-sxm&tp=2",
];

/// Derivations the scan must find (one per place that wrote words before, and the headline
/// numbers): were the `Debug` reading to miss them, the test would pass having read nothing.
const MUST_FIND: &[&str] = &[
    "params_total",
    "weights_bytes",
    "kv_per_token",
    "kv_per_request",
    "mem_requests_theoretical",
    "mem_requests_practical",
    "vllm_num_gpu_blocks",
    "vllm_kv_cache_tokens",
    "vllm_max_concurrency",
    "vllm_total_memory",
    "roof_attainable",
    "roof_matmul_intensity",
    "perf_ttft",
    "perf_output_tokens_per_s",
    "perf_tokens_per_s_per_user",
    "perf_max_batch",
    "perf_usd_per_million_tokens",
    "perf_tokens_per_joule",
    "plan_tpot_under_load",
    "plan_ttft_under_load",
    "plan_requests_per_replica",
    "plan_replicas_peak",
    "plan_cost_peak",
    "load_storage_time",
    "cold_start",
    "offload_kv_tpot",
    "plan_sim_replicas_avg",
    "plan_sim_replicas_peak",
    "sv_math_title",
];

/// Everything the page computes for one scenario, in `Debug` form.
fn scenario_text(query: &str, catalog: &Catalog) -> String {
    let (s, _) = Scenario::from_query(query);
    let r = report::evaluate(&s, catalog).unwrap_or_else(|e| panic!("?{query}: {e}"));
    let gpus = views::ViewGpu::from_report(&r);
    let m = &r.model;
    let mut t = format!("{r:#?}\n");
    let mut put = |v: &dyn std::fmt::Debug| t.push_str(&format!("{v:#?}\n"));
    put(&views::matmul_view(s.views.matmul, &gpus, Lang::Ko));
    put(&views::perf_rows(m, &s, &gpus));
    put(&views::cost_rows(m, &s, &gpus));
    put(&views::tp_tables(m, &s, &gpus));
    put(&views::planner_view(m, &s, catalog, Lang::Ko));
    for ops in [
        views::OpsShown::None,
        views::OpsShown::Decode,
        views::OpsShown::Prefill,
    ] {
        put(&views::roofline_view(m, &s, &gpus, ops, Lang::Ko));
    }
    put(&views::largest_view(&s, catalog, Lang::Ko));
    t
}

#[test]
fn derivations_show_no_english_words() {
    let catalog = Catalog::builtin();
    let mut all = Vec::new();
    for q in SCENARIOS {
        all.extend(derivations_in(&scenario_text(q, catalog)));
    }
    // The simulated planner and the serving section: short runs (their texts, not their
    // accuracy, are checked here).
    let sim = "model=Qwen__Qwen3-8B&gpu=h100-sxm&gpu=l40s&sv_n=60&sv_warm=0";
    let plan = run_plan_job(sim, Lang::Ko, catalog).unwrap_or_else(|e| panic!("plan: {e}"));
    all.extend(derivations_in(&format!("{plan:#?}")));
    let serving = run_job(sim, Lang::Ko, catalog).unwrap_or_else(|e| panic!("serving: {e}"));
    all.extend(derivations_in(&format!("{serving:#?}")));

    // The scan found what it must: every kind of derivation, each read whole.
    let titles: BTreeSet<&str> = all.iter().map(|d| d.title_key.as_str()).collect();
    let missing: Vec<&&str> = MUST_FIND.iter().filter(|k| !titles.contains(**k)).collect();
    assert!(missing.is_empty(), "derivations not found: {missing:?}");
    assert!(all.len() > 1000, "only {} derivations found", all.len());
    for d in &all {
        assert!(
            !d.formula.is_empty() && !d.result.is_empty(),
            "a derivation read without its formula or result: {d:?}"
        );
    }
    let with_key = all.iter().filter(|d| !d.result_key.is_empty()).count();
    let with_terms = all.iter().filter(|d| !d.terms.is_empty()).count();
    assert!(
        with_key > 10 && with_terms > 100,
        "{with_key} keys, {with_terms} with terms"
    );
    // Accelerator names are names, not words (the serving section's step names its GPU).
    let mut names: Vec<&str> = catalog
        .accelerators
        .iter()
        .map(|a| a.name.as_str())
        .collect();
    names.sort_by_key(|n| std::cmp::Reverse(n.len()));
    let found: Vec<_> = all
        .iter()
        .map(|d| {
            let mut d = d.clone();
            for n in &names {
                d.result = d.result.replace(n, "");
            }
            d
        })
        .flat_map(|d| words_of(&d))
        .collect();
    assert!(
        found.is_empty(),
        "English words in the math of {} derivations ({} titles) in Korean:\n{}",
        all.len(),
        titles.len(),
        summary(&found)
    );
}

/// The accuracy view's axis titles name the throughput's unit: a symbol, not a word.
#[test]
fn accuracy_axes_show_no_english_words() {
    use llm_serving_calculator::core::calc::calibration::{accuracy_table, Metric};
    let r = accuracy_table();
    for m in Metric::ALL {
        let v = views::accuracy_scatter(&r, *m, Lang::Ko);
        for t in [&v.x_title, &v.y_title] {
            assert!(english_words(t).is_empty(), "{m:?}: {t:?}");
        }
    }
}

/// The word finder finds the words the derivations wrote before they were symbols only (so
/// the scan above fails on them), and passes what they write now.
#[test]
fn the_finder_finds_the_old_words() {
    let term = |sym: &str| Term::new(sym, "term_rate", "1".into(), "", Source::User("x".into()));
    let old = Derivation {
        title_key: "plan_replicas_peak".into(),
        formula: "ceil(rate × peak multiplier / per replica)".into(),
        substituted: "min N: P99 TTFT(N) ≤ T_ttft and P99 TPOT(N) ≤ T_tpot".into(),
        result: "11 replicas = 22 GPUs, 5 requests, 9 tokens/s (compute-bound)".into(),
        terms: vec![term("rate"), term("peak")],
        ..Derivation::default()
    };
    let mut words: Vec<String> = words_of(&old).into_iter().map(|(w, _, _)| w).collect();
    words.sort();
    words.dedup();
    assert_eq!(
        words,
        [
            "GPUs",
            "and",
            "bound",
            "compute",
            "multiplier",
            "per",
            "replica",
            "replicas",
            "requests",
            "tokens"
        ]
    );
    // A term's symbol is named where it stands, never inside a longer word.
    let inside = Derivation {
        formula: "rates × peak".into(),
        result: "1".into(),
        terms: vec![term("rate"), term("peak")],
        ..Derivation::default()
    };
    let found: Vec<String> = words_of(&inside).into_iter().map(|(w, _, _)| w).collect();
    assert_eq!(found, ["rates"]);
    let new = Derivation {
        title_key: "plan_replicas_peak".into(),
        formula: "⌈λ × k_peak / r⌉".into(),
        substituted: "min N: P99 TTFT(N) ≤ T_ttft ∧ P99 TPOT(N) ≤ T_tpot".into(),
        result: "11".into(),
        result_key: "drv_n_replicas".into(),
        terms: vec![term("λ")],
        ..Derivation::default()
    };
    assert_eq!(words_of(&new), []);
    assert_eq!(new.result_text(Lang::Ko), "레플리카 11개");
    assert_eq!(new.result_text(Lang::En), "11 replicas");
    // A key without a row is reported, and shown as the bare number.
    let unknown = Derivation {
        result: "3".into(),
        result_key: "drv_no_such_row".into(),
        ..Derivation::default()
    };
    assert_eq!(unknown.result_text(Lang::Ko), "3");
    assert_eq!(words_of(&unknown).len(), 1);
}
