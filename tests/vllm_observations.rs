//! The five rows of `vllm_observations.csv` (vLLM logs quoted in public issues), reproduced
//! by `core::memory::vllm_budget` from their logged inputs.
//!
//! vLLM logs GiB rounded to 2 decimals (old versions print "GB" for GiB, and the weights with
//! 4 decimals). Each logged input is therefore known to ±half a unit of its last digit; the
//! block count is asserted to lie in the interval those bounds admit, computed by running the
//! same formula at both ends (not a hand-picked tolerance). Tokens and concurrency are checked
//! exactly from the logged block count. Where the log gives `peak_torch_memory`, the
//! activation peak is `peak_torch − weights` (the weights then cancel).

use llm_serving_calculator::core::base::csv;
use llm_serving_calculator::core::base::derivation::Source;
use llm_serving_calculator::core::base::dtype::Dtype;
use llm_serving_calculator::core::base::units::Bytes;
use llm_serving_calculator::core::calc::memory::{
    activation_estimate, vllm_budget, ActivationParams, KvProfile, VllmBudget, VllmInputs,
};
use llm_serving_calculator::core::calc::weights;
use llm_serving_calculator::core::model::config::parse_model_text;

const CSV: &str = include_str!("fixtures/vllm_observations.csv");
const LLAMA31_8B: &str = include_str!("fixtures/meta-llama__Meta-Llama-3.1-8B.json");

/// The text of data row `i` (1-based, after the header), all fields joined.
fn row_text(i: usize) -> String {
    let recs = csv::parse(CSV).expect("csv parses");
    recs.get(i).expect("row exists").fields.join(" | ")
}

fn gib(x: f64) -> Bytes {
    Bytes::from_gib_f64(x).expect("finite")
}

/// A logged row: inputs and what vLLM printed.
struct Row {
    /// 1-based data row.
    row: usize,
    /// Fragments of the row's text that the numbers below were transcribed from.
    fragments: &'static [&'static str],
    total_gib: f64,
    util: f64,
    /// Weights and the decimals they were logged with.
    weights_gib: (f64, i32),
    /// Either the activation peak directly, or peak_torch (activation = peak_torch − weights).
    activation: Act,
    non_torch_gib: f64,
    max_model_len: u64,
    kv_gib_logged: Option<&'static str>,
    blocks_logged: Option<u64>,
    profile: KvProfile,
}

enum Act {
    Direct(f64),
    PeakTorch(f64),
}

fn llama3_8b(tp: u64) -> KvProfile {
    let m = parse_model_text(LLAMA31_8B).expect("config");
    KvProfile::from_model(&m, Dtype::Bf16, tp).expect("profile")
}

/// Llama-3.2-11B-Vision's language model (its config.json `text_config`: 40 decoder layers,
/// 32 self-attention + 8 cross-attention, all cached; 8 KV heads × head_dim 128, bf16):
/// 2 × 8 × 128 × 2 B = 4,096 B per layer per token.
fn llama32_11b_vision() -> KvProfile {
    KvProfile::uniform(40, Bytes(2 * 8 * 128 * 2))
}

fn inputs(r: &Row, total: f64, w: f64, act: f64, nt: f64) -> VllmInputs {
    VllmInputs {
        total_memory: gib(total),
        total_source: Source::User("total_gpu_memory (log)".into()),
        gpu_memory_utilization: r.util,
        weights: gib(w),
        weights_source: Source::User("weights (log)".into()),
        activation_peak: gib(act),
        activation_source: Source::User("activation peak (log)".into()),
        non_torch: gib(nt),
        non_torch_source: Source::User("non_torch_memory (log)".into()),
        available_kv_override: None,
        block_size: 16,
        max_model_len: r.max_model_len,
        max_num_batched_tokens: 2048,
    }
}

/// Budgets at the central values and at the low and high ends of the rounding.
fn run(r: &Row) -> (VllmBudget, VllmBudget, VllmBudget) {
    let h2 = 0.005; // half a unit of 2 decimals
    let (w, wd) = r.weights_gib;
    let hw = 0.5 * 10f64.powi(-wd);
    let (act_c, act_lo_end, act_hi_end) = match r.activation {
        Act::Direct(a) => (a, a + h2, a - h2),
        // activation = peak − w; with w at its central value the weights cancel in the sum.
        Act::PeakTorch(p) => (p - w, p + h2 - w, p - h2 - w),
    };
    let (w_lo_end, w_hi_end) = match r.activation {
        Act::Direct(_) => (w + hw, w - hw),
        Act::PeakTorch(_) => (w, w),
    };
    let central = vllm_budget(
        &inputs(r, r.total_gib, w, act_c, r.non_torch_gib),
        &r.profile,
    )
    .expect("budget");
    let lo = vllm_budget(
        &inputs(
            r,
            r.total_gib - h2,
            w_lo_end,
            act_lo_end,
            r.non_torch_gib + h2,
        ),
        &r.profile,
    )
    .expect("budget");
    let hi = vllm_budget(
        &inputs(
            r,
            r.total_gib + h2,
            w_hi_end,
            act_hi_end,
            r.non_torch_gib - h2,
        ),
        &r.profile,
    )
    .expect("budget");
    (central, lo, hi)
}

fn rows() -> Vec<Row> {
    vec![
        Row {
            row: 1,
            fragments: &[
                "total_gpu_memory=23.58GiB",
                "Loading model weights took 14.9888 GB",
                "peak_torch_memory=17.06GiB",
                "non_torch_memory=0.35GiB",
                "kv_cache_size=3.81GiB",
                "gpu_memory_utilization=0.90",
                "GPU blocks: 1952",
            ],
            total_gib: 23.58,
            util: 0.90,
            weights_gib: (14.9888, 4),
            activation: Act::PeakTorch(17.06),
            non_torch_gib: 0.35,
            max_model_len: 20_000,
            kv_gib_logged: Some("3.81"),
            blocks_logged: Some(1952),
            profile: llama3_8b(1),
        },
        Row {
            row: 2,
            fragments: &[
                "peak_torch_memory=17.98GiB",
                "non_torch_memory=0.35GiB",
                "kv_cache_size=2.89GiB",
                "# GPU blocks: 1478",
            ],
            total_gib: 23.58,
            util: 0.90,
            weights_gib: (14.9888, 4),
            activation: Act::PeakTorch(17.98),
            non_torch_gib: 0.35,
            max_model_len: 29_000,
            kv_gib_logged: Some("2.89"),
            blocks_logged: Some(1478),
            profile: llama3_8b(1),
        },
        Row {
            row: 3,
            fragments: &[
                "total_gpu_memory 79.22GiB",
                "model weights take 14.96GiB",
                "non_torch_memory 1.79GiB",
                "PyTorch activation peak memory 1.26GiB",
                "available_kv_cache_memory 53.29GiB",
            ],
            total_gib: 79.22,
            util: 0.90,
            weights_gib: (14.96, 2),
            activation: Act::Direct(1.26),
            non_torch_gib: 1.79,
            max_model_len: 8192,
            kv_gib_logged: Some("53.29"),
            blocks_logged: None,
            profile: llama3_8b(1),
        },
        Row {
            row: 4,
            fragments: &[
                "-tp 2",
                "model weights take 7.48GiB",
                "non_torch_memory 3.58GiB",
                "PyTorch activation peak memory 1.26GiB",
            ],
            total_gib: 79.22,
            util: 0.90,
            weights_gib: (7.48, 2),
            activation: Act::Direct(1.26),
            non_torch_gib: 3.58,
            max_model_len: 8192,
            kv_gib_logged: None,
            blocks_logged: None,
            profile: llama3_8b(2),
        },
        Row {
            row: 5,
            fragments: &[
                "--max-model-len 65536",
                "total_gpu_memory (79.22GiB) x gpu_memory_utilization (0.90) = 71.29GiB",
                "model weights take 19.86GiB",
                "non_torch_memory takes 0.16GiB",
                "PyTorch activation peak memory takes 36.63GiB",
                "reserved for KV Cache is 14.65GiB",
                "# CUDA blocks: 6001",
            ],
            total_gib: 79.22,
            util: 0.90,
            weights_gib: (19.86, 2),
            activation: Act::Direct(36.63),
            non_torch_gib: 0.16,
            max_model_len: 65_536,
            kv_gib_logged: Some("14.65"),
            blocks_logged: Some(6001),
            profile: llama32_11b_vision(),
        },
    ]
}

#[test]
fn transcriptions_match_the_fixture() {
    for r in rows() {
        let t = row_text(r.row);
        for f in r.fragments {
            assert!(t.contains(f), "row {}: \"{f}\" not in the fixture", r.row);
        }
    }
}

#[test]
fn available_kv_matches_the_logged_gib() {
    for r in rows() {
        let (c, lo, hi) = run(&r);
        if let Some(logged) = r.kv_gib_logged {
            assert_eq!(
                format!("{:.2}", c.available_kv.gib()),
                logged,
                "row {}",
                r.row
            );
            assert!(
                c.log_lines
                    .contains(&format!("Available KV cache memory: {logged} GiB")),
                "row {}",
                r.row
            );
        }
        assert!(lo.available_kv <= c.available_kv && c.available_kv <= hi.available_kv);
    }
}

#[test]
fn blocks_lie_in_the_interval_the_rounding_admits() {
    for r in rows() {
        let (c, lo, hi) = run(&r);
        assert!(lo.num_gpu_blocks <= c.num_gpu_blocks && c.num_gpu_blocks <= hi.num_gpu_blocks);
        if let Some(b) = r.blocks_logged {
            assert!(
                lo.num_gpu_blocks <= b && b <= hi.num_gpu_blocks,
                "row {}: logged {b} blocks outside [{}, {}]",
                r.row,
                lo.num_gpu_blocks,
                hi.num_gpu_blocks
            );
            // The interval is as narrow as the rounding makes it: its width is the rounding
            // span divided by the block size, plus one.
            let span = hi.available_kv.0 - lo.available_kv.0;
            assert!(hi.num_gpu_blocks - lo.num_gpu_blocks <= span / c.bytes_per_block.0 + 1);
            // And the logged KV size itself (±0.005 GiB) brackets the logged blocks.
            if let Some(k) = r.kv_gib_logged {
                let k: f64 = k.parse().expect("number");
                let blo = gib(k - 0.005).0 / c.bytes_per_block.0;
                let bhi = gib(k + 0.005).0 / c.bytes_per_block.0;
                assert!(
                    blo <= b && b <= bhi,
                    "row {}: {b} not in [{blo}, {bhi}]",
                    r.row
                );
            }
        }
    }
}

#[test]
fn block_bytes_are_16_tokens_of_every_layer() {
    // Llama-3-8B: 16 × 32 × 8 × (128 + 128) × 2 B = 2 MiB; TP 2: 4 KV heads per GPU → 1 MiB.
    let rs = rows();
    let b = |i: usize| run(rs.get(i).expect("row")).0.bytes_per_block;
    assert_eq!(b(0), Bytes(16 * 32 * 8 * 256 * 2));
    assert_eq!(b(3), Bytes(16 * 32 * 4 * 256 * 2));
    // Llama-3.2-11B-Vision: 16 × 40 × 4,096 B = 2.5 MiB.
    assert_eq!(b(4), Bytes(16 * 40 * 4096));
}

#[test]
fn tokens_and_concurrency_from_the_logged_blocks() {
    for (r, tokens, conc) in [(1usize, 1952 * 16, "1.56x"), (2, 23_648, "0.82x")] {
        let row = rows().into_iter().find(|x| x.row == r).expect("row");
        let blocks = row.blocks_logged.expect("blocks");
        let mut inp = inputs(&row, 0.0, 0.0, 0.0, 0.0);
        inp.available_kv_override = Some(Bytes(blocks * 16 * 131_072));
        let b = vllm_budget(&inp, &row.profile).expect("budget");
        assert_eq!(b.num_gpu_blocks, blocks);
        assert_eq!(b.kv_cache_tokens, blocks * 16);
        assert_eq!(b.kv_cache_tokens, tokens);
        assert_eq!(
            b.max_concurrency,
            (blocks * 16) as f64 / row.max_model_len as f64
        );
        let line = format!(
            "Maximum concurrency for {} tokens per request: {conc}",
            llm_serving_calculator::core::base::derivation::group(row.max_model_len)
        );
        assert!(b.log_lines.contains(&line), "{:?}", b.log_lines);
        // vLLM V0 printed the length without separators: the quote has that form.
        let v0 = format!(
            "Maximum concurrency for {} tokens per request: {conc}",
            row.max_model_len
        );
        assert!(row_text(r).contains(&v0));
    }
    // Row 2 does not fit one 29,000-token request, and says so with the logged 23,648.
    let row = rows().into_iter().find(|x| x.row == 2).expect("row");
    let mut inp = inputs(&row, 0.0, 0.0, 0.0, 0.0);
    inp.available_kv_override = Some(Bytes(1478 * 16 * 131_072));
    let b = vllm_budget(&inp, &row.profile).expect("budget");
    assert!(!b.fits_max_model_len);
    let want = "The model's max seq len (29000) is larger than the maximum number of tokens that can be stored in KV cache (23648)";
    assert!(row_text(2).contains(want));
    assert!(b.log_lines.iter().any(|l| l.starts_with(want)));
}

#[test]
fn tp2_weight_shard_is_7_48_gib() {
    // Llama-3-8B bf16: 16,060,522,496 B = 14.96 GiB on one GPU (row 3); per GPU at TP 2
    // (everything sharded but the 65 × 4,096 norm weights) 7.48 GiB (row 4).
    let m = parse_model_text(LLAMA31_8B).expect("config");
    let w = weights::checkpoint(&m, 1).expect("weights").total;
    assert_eq!(format!("{:.2}", w.gib()), "14.96");
    let w2 = weights::checkpoint(&m, 2).expect("tp 2").per_gpu;
    assert_eq!(format!("{:.2}", w2.gib()), "7.48");
}

#[test]
fn activation_estimate_tracks_the_v0_profiles() {
    // Rows 1–2 (vLLM V0, no chunked prefill: the profiling run is one pass of max_model_len
    // tokens, 256 sequences sampled): logged activation = peak_torch − weights.
    let m = parse_model_text(LLAMA31_8B).expect("config");
    for (len, peak) in [(20_000u64, 17.06), (29_000, 17.98)] {
        let logged = peak - 14.9888;
        let ap = ActivationParams {
            chunk_tokens: len,
            logit_rows: 256,
            act: Dtype::Bf16,
            tp: 1,
        };
        let (est, _) = activation_estimate(&m, &ap).expect("estimate");
        let err = (est.gib() - logged) / logged;
        assert!(
            err.abs() < 0.10,
            "{len}: estimate {} GiB vs logged {logged} GiB",
            est.gib()
        );
    }
}

fn cli(args: &[&str]) -> (i32, String, String) {
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let code = llm_serving_calculator::cli::run(&args, &mut out, &mut err);
    (
        code,
        String::from_utf8(out).expect("utf-8"),
        String::from_utf8(err).expect("utf-8"),
    )
}

#[test]
fn cli_reproduces_row_1() {
    // Row 1 inputs: activation = peak_torch − weights = 17.06 − 14.9888 = 2.0712 GiB.
    let cfg = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/meta-llama__Meta-Llama-3.1-8B.json"
    );
    let (code, out, err) = cli(&[
        "vllm",
        "--config",
        cfg,
        "--gpu-memory-gib",
        "23.58",
        "--gpu-memory-utilization",
        "0.9",
        "--max-model-len",
        "20000",
        "--weights-gib",
        "14.9888",
        "--activation-gib",
        "2.0712",
        "--non-torch-gib",
        "0.35",
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("json");
    let gib = v["kv_cache_gib"].as_f64().expect("kv_cache_gib");
    assert_eq!(format!("{gib:.2}"), "3.81");
    let blocks = v["num_gpu_blocks"].as_u64().expect("blocks");
    let row = rows().into_iter().next().expect("row 1");
    let (_, lo, hi) = run(&row);
    assert!(lo.num_gpu_blocks <= blocks && blocks <= hi.num_gpu_blocks);
    assert_eq!(v["kv_cache_tokens"].as_u64(), Some(blocks * 16));
    let conc = v["max_concurrency"].as_f64().expect("conc");
    assert_eq!(conc, (blocks * 16) as f64 / 20_000.0);
}

#[test]
fn cli_bad_input_exits_2_with_one_sentence() {
    let cfg = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/meta-llama__Meta-Llama-3.1-8B.json"
    );
    for args in [
        vec!["vllm", "--config", cfg, "--gpu", "l40s", "--tp", "3"],
        vec!["vllm", "--config", cfg, "--gpu-memory-gib", "0"],
        vec!["vllm", "--config", cfg, "--gpu-memory-gib", "-4"],
        vec![
            "vllm",
            "--config",
            cfg,
            "--gpu",
            "l40s",
            "--gpu-memory-utilization",
            "1.5",
        ],
        vec!["vllm", "--config", cfg],
        vec![
            "vllm",
            "--config",
            "/nonexistent/config.json",
            "--gpu",
            "l40s",
        ],
        vec!["vllm", "--config", cfg, "--gpu", "no-such-gpu"],
        vec![
            "vllm",
            "--config",
            cfg,
            "--gpu",
            "l40s",
            "--kv-dtype",
            "fp7",
        ],
    ] {
        let (code, out, err) = cli(&args);
        assert_eq!(code, 2, "{args:?}: {out}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
    }
}
