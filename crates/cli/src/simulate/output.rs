//! A run's, a sweep's and the disaggregated pools' figures as JSON (vLLM's result keys) and as
//! text (`vllm bench serve`'s summary, then the simulator's own figures).

use crate::core::base::Lang;
use crate::core::base::{f64_any_text, f64_any_value};
use crate::core::sim::{DisaggSummary, EngineKind, EngineUsed, SimNote, SimResult, SweepResult};
use serde_json::{json, Map, Value};

/// A finite number as a JSON number, anything else as `null` (the CLI's JSON where a missing
/// figure is unknown rather than infinite; compare [`f64_any_value`]).
pub(crate) fn num(v: f64) -> Value {
    serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number)
}

/// One run as a JSON object with vLLM's keys.
pub fn result_json(r: &SimResult, rate: f64, max_concurrency: Option<u64>) -> Value {
    let mut m = Map::new();
    m.insert("request_rate".into(), f64_any_value(rate));
    m.insert("max_concurrency".into(), json!(max_concurrency));
    m.insert("num_prompts".into(), json!(r.num_prompts));
    for (k, v) in r.vllm_fields() {
        let value = match k.as_str() {
            "completed" | "total_input_tokens" | "total_output_tokens" | "preemptions" => {
                json!(v as u64)
            }
            _ => num(v),
        };
        m.insert(k, value);
    }
    m.insert("goodput".into(), r.goodput.map_or(Value::Null, num));
    m.insert("partial".into(), json!(r.partial));
    m.insert("mean_batch".into(), num(r.mean_batch));
    m.insert("max_batch".into(), json!(r.max_batch));
    m.insert("peak_kv_occupancy".into(), num(r.peak_kv_occupancy));
    m.insert("engine".into(), json!(r.engine));
    if let Some(d) = &r.disagg {
        m.insert("disagg".into(), disagg_json(d));
    }
    m.insert(
        "notes".into(),
        json!(r
            .notes
            .iter()
            .map(|n| n.message(Lang::En))
            .collect::<Vec<_>>()),
    );
    Value::Object(m)
}

/// The two pools' figures and the stages of TTFT (means and P99s, ms).
fn disagg_json(d: &DisaggSummary) -> Value {
    let stage = |x: &crate::core::sim::Dist| json!({"mean": num(x.mean), "p99": num(x.p99)});
    json!({
        "prefill_workers": d.prefill_workers,
        "prefill_gpus_per_worker": d.prefill_gpus,
        "decode_workers": d.decode_workers,
        "decode_gpus_per_worker": d.decode_gpus,
        "kv_link": d.link.id(),
        "kv_transfer_latency_ms": num(d.transfer_latency_ms),
        "kv_bytes_per_gpu": num(d.kv_bytes_per_gpu),
        "prefill_busy": num(d.prefill_busy),
        "decode_busy": num(d.decode_busy),
        "decode_mean_batch": num(d.decode_mean_batch),
        "prefill_stage_ms": stage(&d.prefill_stage_ms),
        "transfer_ms": stage(&d.transfer_ms),
        "decode_first_token_ms": stage(&d.decode_first_ms),
    })
}

pub(super) fn sweep_json(s: &SweepResult) -> Value {
    json!({
        "saturation_rate": num(s.saturation_rate),
        "max_rate_meeting_targets": s.max_rate_meeting_targets,
        "partial": s.partial,
        "points": s.points.iter().map(|p| {
            let mut v = result_json(&p.result, p.rate, None);
            if let Value::Object(m) = &mut v {
                m.insert("saturated".into(), json!(p.saturated));
                m.insert("meets_targets".into(), json!(p.meets_targets));
            }
            v
        }).collect::<Vec<_>>(),
    })
}

fn line(s: &mut String, label: &str, v: impl std::fmt::Display) {
    s.push_str(&format!("{label:<40} {v}\n"));
}

fn section(s: &mut String, title: &str) {
    s.push_str(&format!("{title:-^50}\n"));
}

/// `vllm bench serve`'s summary of one run, then the simulator's own figures.
pub(super) fn result_text(r: &SimResult, rate: f64) -> String {
    let mut s = String::new();
    s.push_str(&format!("{:=^50}\n", " Serving Benchmark Result "));
    line(&mut s, "Successful requests:", r.completed);
    line(
        &mut s,
        "Request rate configured (RPS):",
        f64_any_text(rate).map_or_else(|| format!("{rate:.2}"), String::from),
    );
    line(
        &mut s,
        "Benchmark duration (s):",
        format!("{:.2}", r.duration_s),
    );
    line(&mut s, "Total input tokens:", r.total_input_tokens);
    line(&mut s, "Total generated tokens:", r.total_output_tokens);
    line(
        &mut s,
        "Request throughput (req/s):",
        format!("{:.2}", r.request_throughput),
    );
    if let Some(g) = r.request_goodput {
        line(&mut s, "Request goodput (req/s):", format!("{g:.2}"));
    }
    line(
        &mut s,
        "Output token throughput (tok/s):",
        format!("{:.2}", r.output_throughput),
    );
    line(
        &mut s,
        "Total Token throughput (tok/s):",
        format!("{:.2}", r.total_token_throughput),
    );
    for (title, short, d) in [
        ("Time to First Token", "TTFT", &r.ttft_ms),
        (
            "Time per Output Token (excl. 1st token)",
            "TPOT",
            &r.tpot_ms,
        ),
        ("Inter-token Latency", "ITL", &r.itl_ms),
        ("End-to-end Latency", "E2EL", &r.e2el_ms),
    ] {
        section(&mut s, title);
        for (stat, v) in [
            ("Mean", d.mean),
            ("Median", d.median),
            ("P90", d.p90),
            ("P99", d.p99),
        ] {
            line(&mut s, &format!("{stat} {short} (ms):"), format!("{v:.2}"));
        }
    }
    section(&mut s, "Simulator");
    line(&mut s, "Preemptions:", r.preemptions);
    // TTFT's three parts, in the order a request meets them (they add up per request), then
    // the queueing's tail.
    for (label, v) in [
        ("Mean server path (ms):", r.frontend_ms.mean),
        ("Mean queueing delay (ms):", r.queue_ms.mean),
        ("Mean prefill to 1st token (ms):", r.prefill_ms.mean),
        ("P99 queueing delay (ms):", r.queue_ms.p99),
    ] {
        line(&mut s, label, format!("{v:.2}"));
    }
    line(
        &mut s,
        "Mean batch (running requests):",
        format!("{:.1}", r.mean_batch),
    );
    line(
        &mut s,
        "Peak KV-block occupancy:",
        format!("{:.1}%", r.peak_kv_occupancy * 100.0),
    );
    if let Some(g) = r.goodput {
        line(
            &mut s,
            "Goodput (share meeting targets):",
            format!("{:.1}%", g * 100.0),
        );
    }
    engine_lines(&mut s, &r.engine);
    if let Some(d) = &r.disagg {
        disagg_lines(&mut s, d);
    }
    s.push_str(&format!("{:=^50}\n", ""));
    s.push_str(&notes_text(&r.notes));
    s
}

/// The two pools and the stages of TTFT, as lines of the text output (the engine lines above
/// are the decode pool's).
fn disagg_lines(s: &mut String, d: &DisaggSummary) {
    section(s, "Disaggregated prefill / decode");
    line(
        s,
        "Prefill workers x GPUs / decode workers x GPUs:",
        format!(
            "{} x {} / {} x {}",
            d.prefill_workers, d.prefill_gpus, d.decode_workers, d.decode_gpus
        ),
    );
    line(
        s,
        "KV link / bytes per GPU per request:",
        format!("{} / {:.1} MB", d.link.id(), d.kv_bytes_per_gpu / 1e6),
    );
    for (label, v) in [
        ("Mean send to prefill done (ms):", d.prefill_stage_ms.mean),
        ("Mean KV transfer (ms):", d.transfer_ms.mean),
        ("Mean landing to 1st token (ms):", d.decode_first_ms.mean),
    ] {
        line(s, label, format!("{v:.2}"));
    }
    line(
        s,
        "Busy share prefill / decode:",
        format!(
            "{:.1}% / {:.1}%",
            d.prefill_busy * 100.0,
            d.decode_busy * 100.0
        ),
    );
    line(
        s,
        "Mean decode batch:",
        format!("{:.1}", d.decode_mean_batch),
    );
}

/// The engine's figures and the instance's parallelism, as lines of the text output.
fn engine_lines(s: &mut String, e: &EngineUsed) {
    let [seqs, tokens, page, _] = e.engine.flag_names();
    let name = |f: &str| f.trim_start_matches('-').replace('-', "_");
    line(
        s,
        &format!("KV blocks / {} / {}:", name(seqs), name(tokens)),
        format!(
            "{} / {} / {}",
            e.num_gpu_blocks, e.max_num_seqs, e.max_num_batched_tokens
        ),
    );
    if e.engine != EngineKind::Vllm {
        line(
            s,
            &format!("Engine / {}:", name(page)),
            format!(
                "{} {} / {}",
                e.engine.name(),
                e.engine.version(),
                e.block_size
            ),
        );
    }
    if let Some(p) = e.parallel {
        line(
            s,
            "Parallelism (tp × dp × pp, ep):",
            format!(
                "{} × {} × {} = {} GPUs on {} node(s), ep {}",
                p.tp,
                p.dp,
                p.pp,
                p.gpus(),
                p.nodes.max(1),
                p.ep
            ),
        );
        line(s, "Engine flags:", p.engine_flags(e.engine));
    }
}

/// A run's notes in English, one `note:` line each (the text outputs of `simulate` and
/// `calibrate`).
pub fn notes_text(notes: &[SimNote]) -> String {
    notes
        .iter()
        .map(|n| format!("note: {}\n", n.message(Lang::En)))
        .collect()
}

pub(super) fn sweep_text(sw: &SweepResult) -> String {
    let mut s = format!(
        "saturation rate {:.2} req/s (the throughput with the queue never empty)\n",
        sw.saturation_rate
    );
    if let Some(r) = sw.max_rate_meeting_targets {
        s.push_str(&format!(
            "highest swept rate meeting the targets at P99: {r} req/s\n"
        ));
    }
    s.push_str(&format!(
        "{:>9} {:>9} {:>10} {:>10} {:>9} {:>9} {:>8}  {}\n",
        "rate", "req/s", "p50 TTFT", "p99 TTFT", "p50 TPOT", "p99 TPOT", "preempt", ""
    ));
    for p in &sw.points {
        let r = &p.result;
        s.push_str(&format!(
            "{:>9.2} {:>9.2} {:>10.1} {:>10.1} {:>9.2} {:>9.2} {:>8}  {}\n",
            p.rate,
            r.request_throughput,
            r.ttft_ms.median,
            r.ttft_ms.p99,
            r.tpot_ms.median,
            r.tpot_ms.p99,
            r.preemptions,
            if p.saturated { "saturated" } else { "" }
        ));
    }
    if sw.partial {
        s.push_str("note: a run stopped at its step budget; its figures are partial\n");
    }
    s
}
