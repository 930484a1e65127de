//! `llmcalc gpus [--json] [--gpu ID]`: the accelerator catalog.
//!
//! Text mode prints an aligned table (one row per chip), or every field of one chip with
//! `--gpu`. JSON mode prints an array of objects in SI units (bytes, bytes/s, FLOP/s), with
//! `null` peaks where a precision is not supported or not published and a `peak_status` map
//! saying which; `watts_per_16bit_tflops` is `{"precision": "bf16" | "fp16",
//! "watts_per_dense_tflops": W}` at the chip's own dense 16-bit precision (FP16 on T4 and V100,
//! which have no BF16), or `null`. A bad `--gpu` id exits 2 with "did you mean".

use super::opts::GpusArgs;
use super::{write_json, write_text, CliError};
use crate::core::base::fmt_sig;
use crate::core::base::Dtype;
use crate::core::hardware::{Accelerator, Catalog, Peaks};
use serde_json::{json, Map, Value};
use std::io::Write;

/// Runs the command.
pub fn run(args: &GpusArgs, out: &mut dyn Write) -> Result<(), CliError> {
    let cat = Catalog::builtin();
    let chosen: Vec<&Accelerator> = match args.gpu.as_deref() {
        Some(id) => vec![cat.get(id)?],
        None => cat.accelerators.iter().collect(),
    };
    if args.json {
        let rows: Vec<Value> = chosen.iter().map(|a| to_json(a)).collect();
        return write_json(out, &Value::Array(rows));
    }
    let text = match (&args.gpu, chosen.first()) {
        (Some(_), Some(a)) => detail(a),
        _ => table(&chosen),
    };
    write_text(out, &text)
}

/// One accelerator as a JSON object (SI units; see the module docs).
pub fn to_json(a: &Accelerator) -> Value {
    let mut peaks = Map::new();
    let mut status = Map::new();
    for (name, p) in Peaks::NAMES.iter().zip(a.peaks.all()) {
        peaks.insert(
            (*name).to_string(),
            p.flops().map_or(Value::Null, |f| json!(f.0)),
        );
        status.insert((*name).to_string(), json!(p.status_id()));
    }
    let mut ridge = Map::new();
    for d in [Dtype::Bf16, Dtype::Fp16, Dtype::Fp8, Dtype::Fp4] {
        ridge.insert(
            d.id().to_string(),
            a.ridge(d).map_or(Value::Null, |r| json!(r)),
        );
    }
    let ic = a.own_interconnect();
    json!({
        "id": a.id,
        "name": a.name,
        "aliases": a.aliases,
        "vendor": a.vendor,
        "form_factor": a.form_factor,
        "architecture": a.architecture.id(),
        "architecture_source": a.architecture_source,
        "memory_bytes": a.capacity().0,
        "memory_basis": a.capacity_basis(),
        "memory_marketed_gb": a.memory_marketed_gb,
        "memory_reported_bytes": a.memory_reported.map(|b| b.0),
        "memory_type": a.memory_type,
        "bandwidth_bytes_per_s": a.bandwidth.0,
        "peaks_flops_per_s": Value::Object(peaks),
        "peak_status": Value::Object(status),
        "ridge_flop_per_byte": Value::Object(ridge),
        "interconnect": {
            "kind": ic.kind,
            "topology": ic.topology.id(),
            "bidirectional_bytes_per_s": ic.bidirectional.map(|b| b.0),
            "per_direction_bytes_per_s": ic.per_direction().map(|b| b.0),
            "domain_size": ic.domain_size,
        },
        "pcie_gen": a.pcie_gen,
        "tdp_w": a.tdp_w,
        "watts_per_16bit_tflops": a.watts_per_16bit_tflops().map(|(d, w)| json!({
            "precision": d.id(),
            "watts_per_dense_tflops": w,
        })),
        "watts_per_gb_per_s": a.watts_per_gbps(),
        "year": a.year,
        "price": a.price.as_ref().map(|p| json!({
            "usd_per_hour": p.usd_per_hour,
            "source": p.source,
            "date": p.date,
        })),
        "source": a.source,
        "notes": a.notes,
    })
}

/// A datasheet figure as written (shortest exact form: 362.05, 1670.5), or "—".
fn opt(v: Option<f64>) -> String {
    v.map_or_else(|| "—".to_string(), |x| format!("{x}"))
}

/// A derived figure to about four significant digits, or "—".
fn opt_sig(v: Option<f64>) -> String {
    v.map_or_else(|| "—".to_string(), fmt_sig)
}

fn peak_cell(a: &Accelerator, d: Dtype) -> String {
    match a.peak(d) {
        crate::core::hardware::Peak::Dense(f) => format!("{}", round_tflops(f.tflops())),
        crate::core::hardware::Peak::NotSupported => "n/s".to_string(),
        crate::core::hardware::Peak::NotPublished => "—".to_string(),
    }
}

/// TFLOPS as in the data file: FLOP/s ÷ 10^12 rounded to 6 decimals (removes the binary
/// noise of the ×10^12 round trip: 362.05, not 362.04999999999995).
fn round_tflops(t: f64) -> f64 {
    (t * 1e6).round() / 1e6
}

/// The aligned table of many chips.
fn table(list: &[&Accelerator]) -> String {
    let head = [
        "id",
        "name",
        "memory GiB",
        "BW GB/s",
        "BF16 TF",
        "FP16 TF",
        "FP8 TF",
        "FP4 TF",
        "link GB/s",
        "TDP W",
        "$/h",
    ];
    let mut rows: Vec<Vec<String>> = vec![head.iter().map(|s| s.to_string()).collect()];
    for a in list {
        rows.push(vec![
            a.id.clone(),
            a.name.chars().take(44).collect(),
            fmt_sig(a.capacity().gib()),
            format!("{}", a.bandwidth.gbps()),
            peak_cell(a, Dtype::Bf16),
            peak_cell(a, Dtype::Fp16),
            peak_cell(a, Dtype::Fp8),
            peak_cell(a, Dtype::Fp4),
            opt(a.interconnect.bidirectional.map(|b| b.gbps())),
            opt(a.tdp_w),
            opt(a.price.as_ref().map(|p| p.usd_per_hour)),
        ]);
    }
    let widths: Vec<usize> = (0..head.len())
        .map(|i| {
            rows.iter()
                .map(|r| r.get(i).map_or(0, |c| c.chars().count()))
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut s = String::new();
    for r in &rows {
        let cells: Vec<String> = r
            .iter()
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, w))| {
                if i < 2 {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        s.push_str(cells.join("  ").trim_end());
        s.push('\n');
    }
    s.push_str(
        "\nDense peaks (no sparsity); n/s = not supported, — = not published. Memory is the driver-reported figure \
         where known, else the marketed GB read as GiB (Apple: 75% of unified memory, Metal's default); link = per-GPU bidirectional. `llmcalc gpus --gpu ID` shows sources.\n",
    );
    s
}

/// Every field of one chip.
fn detail(a: &Accelerator) -> String {
    let ic = a.own_interconnect();
    let mut lines = vec![
        format!("{} ({})", a.name, a.id),
        format!("vendor: {}; form factor: {}", a.vendor, a.form_factor),
        format!(
            "memory: {} marketed GB, {} usable ({} MiB; basis {:?}), {}",
            fmt_sig(a.memory_marketed_gb),
            a.capacity().fmt_gib(),
            fmt_sig(a.capacity().mib()),
            a.capacity_basis(),
            a.memory_type
        ),
        format!("bandwidth: {} GB/s", a.bandwidth.gbps()),
    ];
    for (name, p) in Peaks::NAMES.iter().zip(a.peaks.all()) {
        let v = p.flops().map_or_else(
            || p.status_id().replace('_', " "),
            |f| format!("{} TFLOPS dense", round_tflops(f.tflops())),
        );
        lines.push(format!("  {name:<5} {v}"));
    }
    for d in [Dtype::Bf16, Dtype::Fp8] {
        if let Some(r) = a.ridge(d) {
            lines.push(format!("ridge point {d}: {} FLOP/byte", fmt_sig(r)));
        }
    }
    lines.push(format!(
        "interconnect: {} [{}], {} GB/s bidirectional ({} each way), domain {} GPUs",
        ic.kind,
        ic.topology.id(),
        opt(ic.bidirectional.map(|b| b.gbps())),
        opt(ic.per_direction().map(|b| b.gbps())),
        ic.domain_size
    ));
    lines.push(format!(
        "PCIe gen: {}; TDP: {} W; {}; {} W per GB/s; year {}",
        a.pcie_gen
            .map_or_else(|| "—".to_string(), |g| g.to_string()),
        opt(a.tdp_w),
        a.watts_per_16bit_tflops().map_or_else(
            || "— W per dense 16-bit TFLOPS".to_string(),
            |(d, w)| format!(
                "{} W per dense {} TFLOPS",
                fmt_sig(w),
                d.id().to_uppercase()
            )
        ),
        opt_sig(a.watts_per_gbps()),
        a.year
    ));
    lines.push(match &a.price {
        Some(p) => format!(
            "price: ${}/GPU-hour ({}; {})",
            fmt_sig(p.usd_per_hour),
            p.source,
            p.date
        ),
        None => "price: none published".to_string(),
    });
    if !a.aliases.is_empty() {
        lines.push(format!("aliases: {}", a.aliases.join(", ")));
    }
    lines.push(format!("source: {}", a.source));
    if !a.notes.is_empty() {
        lines.push(format!("notes: {}", a.notes));
    }
    let mut s = lines.join("\n");
    s.push('\n');
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run_args(v: &[&str]) -> (i32, String, String) {
        let mut all = vec!["gpus".to_string()];
        all.extend(v.iter().map(|s| s.to_string()));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let code = crate::run(&all, &mut out, &mut err);
        (
            code,
            String::from_utf8_lossy(&out).into_owned(),
            String::from_utf8_lossy(&err).into_owned(),
        )
    }

    #[test]
    fn json_lists_every_chip_with_si_units() {
        let (code, out, _) = run_args(&["--json"]);
        assert_eq!(code, 0);
        let v: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
        let arr = v.as_array().cloned().unwrap_or_default();
        assert_eq!(arr.len(), Catalog::builtin().accelerators.len());
        let by_id = |id: &str| {
            arr.iter()
                .find(|o| o["id"] == id)
                .cloned()
                .unwrap_or(Value::Null)
        };
        let h = by_id("h100-sxm");
        // 81,559 MiB × 2^20 = 85,520,809,984 B.
        assert_eq!(h["memory_bytes"].as_u64(), Some(81_559 * 1_048_576));
        assert_eq!(h["bandwidth_bytes_per_s"].as_f64(), Some(3350e9));
        assert_eq!(h["peaks_flops_per_s"]["bf16"].as_f64(), Some(989.5e12));
        assert_eq!(
            h["interconnect"]["bidirectional_bytes_per_s"].as_f64(),
            Some(900e9)
        );
        let a = by_id("a100-sxm-80gb");
        assert!(a["peaks_flops_per_s"]["fp8"].is_null());
        assert_eq!(a["peak_status"]["fp8"], "not_supported");
        let g = by_id("m4-max");
        assert_eq!(g["peak_status"]["bf16"], "not_published");
        assert!(g["watts_per_16bit_tflops"].is_null());
        // The T4 has no BF16: its watts per TFLOPS are per FP16, and say so.
        let t4 = by_id("t4");
        assert_eq!(t4["watts_per_16bit_tflops"]["precision"], "fp16");
        assert_eq!(
            t4["watts_per_16bit_tflops"]["watts_per_dense_tflops"].as_f64(),
            Some(70.0 / 65.0)
        );
    }

    #[test]
    fn bad_gpu_exits_2_with_suggestions() {
        let (code, _, err) = run_args(&["--gpu", "h100-sxmm"]);
        assert_eq!(code, 2);
        assert!(
            err.contains("did you mean") && err.contains("h100-sxm"),
            "{err}"
        );
    }

    #[test]
    fn text_table_and_detail() {
        let (code, out, _) = run_args(&[]);
        assert_eq!(code, 0);
        assert!(out.lines().any(|l| l.starts_with("l40s ")), "{out}");
        let (code, out, _) = run_args(&["--gpu", "H100"]);
        assert_eq!(code, 0);
        assert!(out.contains("h100-sxm") && out.contains("source:"), "{out}");
    }
}
