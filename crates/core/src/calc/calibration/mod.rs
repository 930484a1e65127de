//! Calibration of the performance model against measured benchmarks.
//!
//! `data/perf_calibration.csv` is a verbatim copy of `shared/reference/perf_calibration.csv`
//! (measured TTFT, TPOT and throughput from public benchmark tables, each row with its source
//! and a trust tier T1/T2/T3 as the first token of `quote_or_table_ref`). What is compiled in
//! is `data/perf_calibration.app.csv`, its projection on the columns the model reads
//! ([`APP_COLUMNS`]; the tier token instead of the whole quote, line for line, so line numbers
//! still point into the sourced file); a test checks it equals the projection of the full file.
//!
//! Rows are mapped to (model, accelerator, TP, batch, lengths, precisions, metric, value); rows
//! that cannot be mapped are skipped with a reason and counted. Every third mappable T1/T2 row
//! (file order) is held out as the TEST set, and T3 (anecdotal) rows are always in it; the rest
//! is the TRAINING set. [`fit`] searches the
//! efficiencies that minimise the mean over metrics of the median absolute relative error on the
//! training rows (coordinate descent over fixed grids, deterministic, no external crates). The
//! constants in `core::perf` (`FIT_*`) are that optimum; a test re-runs the fit.
//!
//! Model configurations: hyperparameters of the public Hugging Face `config.json` files
//! (`data/presets/`, `shared/reference/configs/`); Llama-2-70B, Mistral-7B-v0.1 and GPT-J-6B are
//! not in those folders and are built from their published hyperparameters (see [`MODELS`]).
//!
//! Where each part lives: the benchmark rows, their mapping and the train/test split in
//! `rows`; the model configurations in `models`; error statistics in `stats`; a row's
//! prediction in `predict`; the fit in `fit`; the accuracy table in `accuracy`.

mod accuracy;
mod fit;
mod models;
mod predict;
mod rows;
mod stats;

pub use accuracy::{
    accuracy_table, accuracy_table_with, range_for, ranges, render_stats, AccuracyReport,
    AccuracyRow, RangeFactor,
};
pub use fit::{fit, objective_at, FitResult};
pub use models::{dense_model, map_model, ModelSpec, MODELS};
pub use rows::{
    load, map_gpu, CalRow, CalSet, Metric, Skipped, Tier, APP_COLUMNS, CALIBRATION_CSV,
    MAX_LOAD_BATCH_CAP, MEMORY_TOLERANCE,
};
pub use stats::ErrorStats;
