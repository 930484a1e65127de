//! The static performance model against vLLM's own static batches from a source outside the
//! calibration and the serving validation: Argonne's LLM-Inference-Bench
//! (`fixtures/vllm_static_argonne.csv`, provenance in `fixtures/SOURCES.md`). Each row is
//! vLLM's `benchmark_latency.py`-style run of `B` prompts of `L` tokens generating `L` tokens
//! each (fp16, one to four GPUs, vLLM 0.5-era V0), timed end to end.
//!
//! Mapping (stated, not fitted): Meta-Llama-3-8B → the Llama-3.1-8B preset (same shapes),
//! Mistral-7B-v0.1 → the Mistral-7B-v0.3 preset (vocabulary 32,000 → 32,768; its 4,096-token
//! sliding window never binds at these lengths), "Nvidia A100 GPU" → the A100 40 GB SXM
//! (ALCF's Polaris nodes), "Nvidia H100 GPU" → the H100 SXM (the source names no form factor).
//! Rows whose batch does not fit the KV cache in the model are left out.
//!
//! What it shows (printed; `docs/history/SERVING_SIMULATOR.md` reads it): the signed error of the
//! predicted end-to-end time per GPU and batch, and the time per sequence per decode step that
//! the gap implies, `(measured − predicted) / (L · (B − 1))`. The asserted levels are the
//! achieved ones rounded up (as `serving_validation.rs` does), so a change to the model that
//! moves them shows here.

mod common;

use common::percentile;
use llm_serving_calculator::core::calc::{evaluate, Efficiencies, Workload};
use llm_serving_calculator::core::model::{parse_model_text, preset};

const CSV: &str = include_str!("fixtures/vllm_static_argonne.csv");

/// One mapped row: GPU id, batch, length, measured and predicted end-to-end seconds.
struct Row {
    gpu: &'static str,
    batch: u64,
    len: u64,
    measured: f64,
    predicted: f64,
}

fn preset_of(model: &str) -> Option<&'static str> {
    match model {
        "meta-llama/Llama-2-7b-hf" => Some("meta-llama__Llama-2-7b-hf"),
        "meta-llama/Meta-Llama-3-8B" => Some("meta-llama__Meta-Llama-3.1-8B"),
        "mistralai/Mistral-7B-v0.1" => Some("mistralai__Mistral-7B-Instruct-v0.3"),
        _ => None,
    }
}

fn gpu_of(hardware: &str) -> Option<&'static str> {
    match hardware {
        "Nvidia A100 GPU" => Some("a100-sxm-40gb"),
        "Nvidia H100 GPU" => Some("h100-sxm"),
        _ => None,
    }
}

fn rows() -> (Vec<Row>, usize) {
    let (mut out, mut left_out) = (Vec::new(), 0);
    common::for_each_csv_row(CSV, |line, f| {
        let num = |k: &str| -> f64 { f[k].parse().unwrap_or_else(|_| panic!("line {line}")) };
        let gpu = gpu_of(f["Hardware"]).expect("an A100 or H100 row");
        let name = preset_of(f["Model"]).expect("a mapped model");
        let model = parse_model_text(preset(name).expect("preset").json()).expect("model");
        let (batch, len) = (num("Batch Size") as u64, num("Input Output Length") as u64);
        let wl = Workload::new(batch, len, len, num("Num of Hardware") as u64);
        let eff = Efficiencies::default();
        let p = evaluate(&model, common::gpu(gpu), &wl, &eff, None).expect("evaluates");
        if !p.fits || p.max_batch < batch {
            left_out += 1;
            return;
        }
        out.push(Row {
            gpu,
            batch,
            len,
            measured: num("Latency"),
            predicted: p.e2e.0,
        });
    });
    (out, left_out)
}

#[test]
fn vllm_static_batches_error_by_batch() {
    let (rows, left_out) = rows();
    println!(
        "{} rows mapped, {left_out} left out (batch over the KV cache)",
        rows.len()
    );
    // Achieved |median signed error| per (GPU, batch), rounded up: the model agrees with vLLM
    // at batch 1 and is faster than vLLM by a share that grows with the batch.
    let levels = [
        ("a100-sxm-40gb", 1, 0.01),
        ("a100-sxm-40gb", 16, 0.12),
        ("a100-sxm-40gb", 32, 0.19),
        ("a100-sxm-40gb", 64, 0.28),
        ("h100-sxm", 1, 0.08),
        ("h100-sxm", 16, 0.19),
        ("h100-sxm", 32, 0.28),
        ("h100-sxm", 64, 0.39),
    ];
    for (gpu, batch, level) in levels {
        let sel: Vec<&Row> = rows
            .iter()
            .filter(|r| r.gpu == gpu && r.batch == batch)
            .collect();
        assert!(sel.len() >= 20, "{gpu} batch {batch}: {} rows", sel.len());
        let err = percentile(
            &mut sel
                .iter()
                .map(|r| r.predicted / r.measured - 1.0)
                .collect::<Vec<_>>(),
            0.5,
        );
        let per_seq = if batch > 1 {
            let us = sel
                .iter()
                .map(|r| (r.measured - r.predicted) / (r.len * (r.batch - 1)) as f64 * 1e6);
            format!("{:.0} µs", percentile(&mut us.collect::<Vec<_>>(), 0.5))
        } else {
            "–".into()
        };
        println!(
            "{gpu:14} batch {batch:3}: {:3} rows, median signed error {:+6.1}%, \
             implied time per sequence per step {per_seq}",
            sel.len(),
            err * 100.0
        );
        common::assert_within_level(&format!("{gpu} batch {batch}"), err, level);
    }
}
