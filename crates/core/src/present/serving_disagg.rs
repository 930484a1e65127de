//! "Serving under load" with disaggregated prefill and decode: the table of the two pools at
//! the chosen rate (each GPU's `sim::DisaggSummary`), one column per GPU, every row's unit in
//! its label.
//!
//! Units: busy shares in % (the share of the run a pool's units were running a step, mean
//! over units); the KV sent per request per GPU in MB (10^6 bytes); the stages of TTFT in ms,
//! mean and P99 (from the client's send to the prefill's end; the KV's transfer; from the
//! KV's landing to the first token).

use crate::base::i18n::{tr, Lang};
use crate::base::units::fmt_sig;
use crate::sim::disagg::{DisaggSummary, KvLink};
use crate::sim::stats::Dist;

/// Translation key of a link's name.
pub const fn link_label_key(l: KvLink) -> &'static str {
    match l {
        KvLink::Nvlink => "sv_link_nvlink",
        KvLink::Ib => "sv_link_ib",
        KvLink::Roce => "sv_link_roce",
    }
}

/// A link's short name (the same in every language), as the table and the note write it.
pub const fn link_name(l: KvLink) -> &'static str {
    match l {
        KvLink::Nvlink => "NVLink",
        KvLink::Ib => "InfiniBand",
        KvLink::Roce => "RoCE",
    }
}

/// The rows' translation keys, in order (each label names its unit).
pub const DISAGG_ROWS: [&str; 10] = [
    "sv_pd_row_prefill_pool",
    "sv_pd_row_decode_pool",
    "sv_pd_row_prefill_busy",
    "sv_pd_row_decode_busy",
    "sv_pd_row_decode_batch",
    "sv_pd_row_kv_bytes",
    "sv_pd_row_link",
    "sv_pd_row_stage_prefill",
    "sv_pd_row_stage_transfer",
    "sv_pd_row_stage_decode",
];

/// The table: a header row (the GPUs) and one row per [`DISAGG_ROWS`] key, one column per
/// `(GPU name, pools)`.
pub fn disagg_table(
    cols: &[(&str, &DisaggSummary)],
    lang: Lang,
) -> (Vec<String>, Vec<Vec<String>>) {
    let mut head = vec![tr(lang, "sv_stat").to_string()];
    head.extend(cols.iter().map(|(n, _)| (*n).to_string()));
    let pct = |x: f64| format!("{:.1}", x * 100.0);
    let pair = |s: &Dist| format!("{} / {}", fmt_sig(s.mean), fmt_sig(s.p99));
    let cell = |k: usize, p: &DisaggSummary| match k {
        0 => format!("{} × {}", p.prefill_workers, p.prefill_gpus),
        1 => format!("{} × {}", p.decode_workers, p.decode_gpus),
        2 => pct(p.prefill_busy),
        3 => pct(p.decode_busy),
        4 => fmt_sig(p.decode_mean_batch),
        5 => fmt_sig(p.kv_bytes_per_gpu / 1e6),
        6 => format!(
            "{} ({} ms)",
            link_name(p.link),
            fmt_sig(p.transfer_latency_ms)
        ),
        7 => pair(&p.prefill_stage_ms),
        8 => pair(&p.transfer_ms),
        _ => pair(&p.decode_first_ms),
    };
    let rows = DISAGG_ROWS
        .iter()
        .enumerate()
        .map(|(k, key)| {
            let mut r = vec![tr(lang, key).to_string()];
            r.extend(cols.iter().map(|(_, p)| cell(k, p)));
            r
        })
        .collect();
    (head, rows)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_writes_units_as_its_labels_say() {
        let stage = |mean: f64, p99: f64| Dist {
            mean,
            p99,
            ..Dist::default()
        };
        let p = DisaggSummary {
            prefill_workers: 1,
            prefill_gpus: 2,
            decode_workers: 3,
            decode_gpus: 1,
            link: KvLink::Nvlink,
            transfer_latency_ms: 1.0,
            prefill_busy: 0.4321,
            decode_busy: 0.9,
            decode_mean_batch: 12.5,
            kv_bytes_per_gpu: 150_994_944.0,
            prefill_stage_ms: stage(80.0, 120.0),
            transfer_ms: stage(1.5, 2.0),
            decode_first_ms: stage(10.0, 30.0),
        };
        for lang in [Lang::En, Lang::Ko] {
            let (head, rows) = disagg_table(&[("H100", &p)], lang);
            assert_eq!(head.len(), 2);
            assert_eq!(rows.len(), DISAGG_ROWS.len());
            let cells: Vec<&str> = rows.iter().map(|r| r[1].as_str()).collect();
            assert_eq!(cells[0], "1 × 2");
            assert_eq!(cells[2], "43.2");
            assert_eq!(cells[5], "151");
            assert_eq!(cells[6], "NVLink (1 ms)");
            assert_eq!(cells[7], "80 / 120");
            // Every label is a translated row (not its key).
            assert!(
                rows.iter().all(|r| !r[0].starts_with("sv_pd_row")),
                "{rows:?}"
            );
        }
    }
}
