//! The accelerator catalog against its data file, the reference notes and the datasheets.
//!
//! Datasheet figures below are quoted from `shared/reference/accelerators.csv` (`spec_source`)
//! and `accelerators-notes.md`; vendor tables print 2:4-sparse tensor figures marked "*", which
//! the catalog halves.

mod common;

use llm_serving_calculator::core::base::dtype::Dtype;
use llm_serving_calculator::core::base::error::CalcError;
use llm_serving_calculator::core::base::units::{BytesPerSecond, MIB};
use llm_serving_calculator::core::hardware::catalog::{
    Accelerator, CapacityBasis, Catalog, CustomAccelerator, InterconnectPreset, Link, Peak,
};
use std::collections::HashSet;

fn cat() -> &'static Catalog {
    Catalog::builtin()
}

use common::gpu;

#[track_caller]
fn tflops(a: &Accelerator, d: Dtype) -> f64 {
    match a.peak(d) {
        Peak::Dense(f) => f.tflops(),
        other => panic!("{} {d}: {other:?}", a.id),
    }
}

#[track_caller]
fn close(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= want.abs() * 1e-9,
        "{what}: got {got}, want {want}"
    );
}

#[test]
fn the_file_parses_with_at_least_40_rows() {
    let parsed = Catalog::parse(Catalog::builtin_csv());
    assert!(parsed.is_ok(), "{:?}", parsed.err());
    assert_eq!(parsed.ok().as_ref(), Some(cat()));
    assert!(
        cat().accelerators.len() >= 44,
        "{}",
        cat().accelerators.len()
    );
}

#[test]
fn ids_unique_lowercase_and_every_row_sourced() {
    let mut seen = HashSet::new();
    for a in &cat().accelerators {
        assert!(seen.insert(a.id.clone()), "duplicate {}", a.id);
        assert_eq!(a.id, a.id.to_ascii_lowercase());
        assert!(
            a.id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
            "{}",
            a.id
        );
        assert!(!a.source.trim().is_empty(), "{} has no source", a.id);
        assert!(
            !a.name.trim().is_empty() && !a.vendor.trim().is_empty(),
            "{}",
            a.id
        );
        if let Some(p) = &a.price {
            assert!(
                !p.source.trim().is_empty() && !p.date.trim().is_empty(),
                "{} price",
                a.id
            );
        }
    }
}

#[test]
fn the_issue_ids_are_all_present() {
    for id in [
        "t4",
        "a10",
        "a10g",
        "l4",
        "l40",
        "l40s",
        "a100-pcie-40gb",
        "a100-sxm-40gb",
        "a100-pcie-80gb",
        "a100-sxm-80gb",
        "h100-pcie",
        "h100-sxm",
        "h100-nvl",
        "h200-sxm",
        "h200-nvl",
        "gh200-96gb",
        "gh200-144gb",
        "b200",
        "b300",
        "gb200",
        "gb300",
        "v100-sxm2-16gb",
        "rtx-4090",
        "rtx-5090",
        "rtx-6000-ada",
        "rtx-pro-6000-ws",
        "rtx-pro-6000-server",
        "mi210",
        "mi250x",
        "mi300x",
        "mi325x",
        "mi355x",
        "gaudi2",
        "gaudi3",
        "tpu-v4",
        "tpu-v5e",
        "tpu-v5p",
        "tpu-v6e",
        "tpu7x-ironwood",
        "inferentia2",
        "trainium2",
        "m2-ultra",
        "m3-max",
        "m4-max",
    ] {
        assert!(
            cat().accelerators.iter().any(|a| a.id == id),
            "missing {id}"
        );
    }
}

#[test]
fn every_number_is_finite_and_positive() {
    let ok = |v: f64| v.is_finite() && v > 0.0;
    for a in &cat().accelerators {
        assert!(
            ok(a.memory_marketed_gb) && a.capacity().0 > 0,
            "{} memory",
            a.id
        );
        assert!(ok(a.bandwidth.0), "{} bandwidth", a.id);
        for p in a.peaks.all() {
            if let Peak::Dense(f) = p {
                assert!(ok(f.0), "{} peak", a.id);
            }
        }
        assert!(
            a.interconnect.bidirectional.is_none_or(|b| ok(b.0)),
            "{} link",
            a.id
        );
        assert!(a.interconnect.domain_size >= 1, "{} domain", a.id);
        assert!(a.tdp_w.is_none_or(ok), "{} tdp", a.id);
        assert!(
            a.price.as_ref().is_none_or(|p| ok(p.usd_per_hour)),
            "{} price",
            a.id
        );
        assert!((2015..=2030).contains(&a.year), "{} year", a.id);
        // A driver reading is never more than the marketed figure read as GiB.
        if let Some(b) = a.memory_reported {
            assert!(
                b.gib() <= a.memory_marketed_gb * 1.0001,
                "{} reported {} GiB",
                a.id,
                b.gib()
            );
        }
    }
}

#[test]
fn l40s_ridge_point_is_419() {
    // Textbook: 362 TFLOPS FP16 dense / 864 GB/s ≈ 419 FLOP/B; NVIDIA "362.05 | 733*".
    let l = gpu("l40s");
    let want = tflops(l, Dtype::Fp16) * 1e12 / (l.bandwidth.gbps() * 1e9);
    let got = l.ridge(Dtype::Fp16).unwrap_or(0.0);
    close(got, want, "ridge from fields");
    close(got, 362.05e12 / 864e9, "ridge vs datasheet");
    assert_eq!((got * 10.0).round() / 10.0, 419.0);
    // The L40 (same memory, half the tensor rate) is about 210, not 419.
    assert!((gpu("l40").ridge(Dtype::Fp16).unwrap_or(0.0) - 209.5).abs() < 0.1);
}

/// The 16-bit peak FP8 is compared with: FP16 when published, else BF16.
fn sixteen_bit(a: &Accelerator) -> f64 {
    a.peak_flops(Dtype::Fp16)
        .or_else(|| a.peak_flops(Dtype::Bf16))
        .map_or(0.0, |f| f.0)
}

#[test]
fn fp8_is_twice_fp16_only_where_the_datasheets_say_so() {
    // Notes, "FP8 = 2× FP16": 2× on Hopper, Ada, Blackwell, MI300X/MI325X/MI355X, Gaudi 2
    // (865 vs 432), TPU7x and Trainium2 (1,299 vs 667 = 1.95×: within 5 %).
    for id in [
        "h100-pcie",
        "h100-sxm",
        "h100-nvl",
        "h200-sxm",
        "h200-nvl",
        "gh200-96gb",
        "gh200-144gb",
        "l4",
        "l40",
        "l40s",
        "rtx-4090",
        "rtx-6000-ada",
        "b200",
        "b300",
        "gb200",
        "gb300",
        "rtx-5090",
        "rtx-pro-6000-ws",
        "rtx-pro-6000-server",
        "mi300x",
        "mi325x",
        "mi355x",
        "gaudi2",
        "trainium2",
        "tpu7x-ironwood",
    ] {
        let a = gpu(id);
        let r = a.peak_flops(Dtype::Fp8).map_or(0.0, |f| f.0) / sixteen_bit(a);
        assert!((r - 2.0).abs() < 0.1, "{id}: FP8/FP16 = {r}");
    }
    // Not 2× on Gaudi 3 (1,835 = 1,835), TPU v5p (459 = 459), v6e (918 = 918), Inferentia2 (190 = 190).
    for id in ["gaudi3", "tpu-v5p", "tpu-v6e", "inferentia2"] {
        let a = gpu(id);
        let r = a.peak_flops(Dtype::Fp8).map_or(0.0, |f| f.0) / sixteen_bit(a);
        assert!((r - 1.0).abs() < 1e-9, "{id}: FP8/FP16 = {r}");
    }
}

#[test]
fn not_supported_is_not_not_published() {
    for id in [
        "a100-pcie-40gb",
        "a100-sxm-40gb",
        "a100-pcie-80gb",
        "a100-sxm-80gb",
        "t4",
        "v100",
        "a10",
        "mi250x",
    ] {
        assert_eq!(gpu(id).peak(Dtype::Fp8), Peak::NotSupported, "{id} fp8");
    }
    for id in ["t4", "v100-sxm2-16gb", "v100-sxm2-32gb"] {
        assert_eq!(gpu(id).peak(Dtype::Bf16), Peak::NotSupported, "{id} bf16");
    }
    // A10G: NVIDIA and AWS publish no tensor figures; the catalog carries a third-party dense
    // 16-bit figure, named as such in its source, and nothing for the other precisions.
    let a10g = gpu("a10g");
    assert!(matches!(a10g.peak(Dtype::Bf16), Peak::Dense(_)));
    assert_eq!(a10g.peak(Dtype::Bf16), a10g.peak(Dtype::Fp16));
    assert!(a10g.source.contains("third-party") && a10g.notes.contains("DENSE"));
    assert_eq!(a10g.peak(Dtype::Int8), Peak::NotPublished);
    // Below the A10's dense datasheet figure (the A10G's tensor rate is lower), so never a
    // sparse figure taken as dense.
    assert!(a10g.peak_flops(Dtype::Bf16) < gpu("a10").peak_flops(Dtype::Bf16));
    // Apple publishes no GPU TFLOPS.
    assert_eq!(gpu("m4-max").peak(Dtype::Bf16), Peak::NotPublished);
    // FP6: B200 at the FP8 rate; MI355X at the FP4 rate; none on Hopper.
    assert_eq!(gpu("b200").peak(Dtype::Fp6), gpu("b200").peak(Dtype::Fp8));
    assert_eq!(
        gpu("mi355x").peak(Dtype::Fp6),
        gpu("mi355x").peak(Dtype::Fp4)
    );
    assert_eq!(gpu("h100-sxm").peak(Dtype::Fp6), Peak::NotSupported);
}

#[test]
fn no_sparse_figure_taken_as_dense() {
    // H100 SXM: NVIDIA prints "BF16 Tensor Core 1,979 TFLOPS*" (sparse) → 989.5 dense.
    assert_eq!(
        gpu("h100-sxm").peak_flops(Dtype::Bf16).map(|f| f.0),
        Some(989.5e12)
    );
    // L40S: "BFLOAT16 Tensor Core 362.05 | 733*".
    assert_eq!(
        gpu("l40s").peak_flops(Dtype::Bf16).map(|f| f.0),
        Some(362.05e12)
    );
}

#[test]
fn spot_checks_against_datasheets() {
    // H100 SXM (nvidia.com/en-us/data-center/h100): 80 GB HBM3, 3.35 TB/s, FP8 3,958* → 1,979,
    // FP32 67, up to 700 W, NVLink 900 GB/s; nvidia-smi 81,559 MiB.
    let h = gpu("h100-sxm");
    assert_eq!(h.capacity().0, 81_559 * MIB);
    assert_eq!(h.capacity_basis(), CapacityBasis::DriverReported);
    close(h.bandwidth.gbps(), 3350.0, "h100 bw");
    close(tflops(h, Dtype::Fp8), 1979.0, "h100 fp8");
    close(tflops(h, Dtype::Fp32), 67.0, "h100 fp32");
    assert_eq!(h.tdp_w, Some(700.0));
    assert_eq!(h.interconnect.bidirectional.map(|b| b.gbps()), Some(900.0));
    assert_eq!(
        h.interconnect.per_direction().map(|b| b.gbps()),
        Some(450.0)
    );
    // H200 SXM (nvidia.com/en-us/data-center/h200): 141 GB HBM3e, 4.8 TB/s, same compute as H100.
    let h2 = gpu("h200-sxm");
    assert_eq!(h2.capacity().0, 143_771 * MIB);
    close(h2.bandwidth.gbps(), 4800.0, "h200 bw");
    close(tflops(h2, Dtype::Bf16), 989.5, "h200 bf16");
    // A100 80GB SXM (a100-80gb datasheet): "2,039 GB/s", "FP16 Tensor Core 312 TF | 624 TF*", 400 W.
    let a = gpu("a100-sxm-80gb");
    close(a.bandwidth.gbps(), 2039.0, "a100 bw");
    close(tflops(a, Dtype::Fp16), 312.0, "a100 fp16");
    close(tflops(a, Dtype::Fp32), 19.5, "a100 fp32");
    assert_eq!(a.tdp_w, Some(400.0));
    // L40S (nvidia.com/en-us/data-center/l40s): 48 GB GDDR6, 864 GB/s, FP8 "733 | 1,466*", 350 W.
    let l = gpu("l40s");
    close(l.bandwidth.gbps(), 864.0, "l40s bw");
    close(tflops(l, Dtype::Fp8), 733.0, "l40s fp8");
    assert_eq!(l.tdp_w, Some(350.0));
    assert_eq!(l.capacity().0, 46_068 * MIB);
    // A10G (Baseten; nvidia-smi on g5): 24 GB GDDR6, 600 GB/s, 23,028 MiB.
    let g = gpu("a10g");
    close(g.bandwidth.gbps(), 600.0, "a10g bw");
    assert_eq!(g.capacity().0, 23_028 * MIB);
    // MI300X (amd.com): 192 GB HBM3, 5.3 TB/s, FP16 1,307.4 dense, FP8 2,614.9, 750 W;
    // rocm-smi 205,822,885,888 B.
    let m = gpu("mi300x");
    assert_eq!(m.capacity().0, 205_822_885_888);
    close(m.bandwidth.gbps(), 5300.0, "mi300x bw");
    close(tflops(m, Dtype::Fp16), 1307.4, "mi300x fp16");
    close(tflops(m, Dtype::Fp8), 2614.9, "mi300x fp8");
    assert_eq!(m.tdp_w, Some(750.0));
    // HGX B200 (nvidia.com): 180 GB, 7.7 TB/s, FP16/BF16 "4.5 PF*" → 2,250, FP4 "18 | 9 PF",
    // 1,000 W, NVLink 1,800 GB/s; nvidia-smi 183,359 MiB.
    let b = gpu("b200");
    assert_eq!(b.capacity().0, 183_359 * MIB);
    close(b.bandwidth.gbps(), 7700.0, "b200 bw");
    close(tflops(b, Dtype::Bf16), 2250.0, "b200 bf16");
    close(tflops(b, Dtype::Fp4), 9000.0, "b200 fp4");
    assert_eq!(b.tdp_w, Some(1000.0));
    // TPU v5e (cloud.google.com/tpu/docs/v5e): 197 TFLOPs bf16, 393/394 TOPs int8, 16 GB HBM,
    // 819 GBps, ICI 400 GBps bidirectional.
    let t = gpu("tpu-v5e");
    close(tflops(t, Dtype::Bf16), 197.0, "v5e bf16");
    close(t.bandwidth.gbps(), 819.0, "v5e bw");
    assert_eq!(t.capacity_basis(), CapacityBasis::MarketedGib);
    assert_eq!(t.capacity().gib(), 16.0);
    assert_eq!(t.interconnect.bidirectional.map(|b| b.gbps()), Some(400.0));
}

#[test]
fn h100_capacity_is_81559_mib_exactly() {
    assert_eq!(gpu("h100-sxm").capacity().0, 81_559 * 1_048_576);
    assert_eq!(gpu("h100-sxm").capacity().mib(), 81_559.0);
}

#[test]
fn aliases_resolve_case_insensitively() {
    for (given, id) in [
        ("H100", "h100-sxm"),
        ("a100-80gb", "a100-sxm-80gb"),
        ("A100", "a100-sxm-80gb"),
        ("h200", "h200-sxm"),
        ("MI300", "mi300x"),
        ("4090", "rtx-4090"),
        ("L40S", "l40s"),
        ("  l40s ", "l40s"),
        ("NVIDIA H100 SXM", "h100-sxm"),
        ("nvidia l40s", "l40s"),
        ("H100_SXM", "h100-sxm"),
        ("Trillium", "tpu-v6e"),
        ("ironwood", "tpu7x-ironwood"),
    ] {
        assert_eq!(
            cat().get(given).map(|a| a.id.as_str()).ok(),
            Some(id),
            "{given}"
        );
    }
    // Every id, alias and display name resolves to its own row.
    for a in &cat().accelerators {
        for k in std::iter::once(&a.id)
            .chain(&a.aliases)
            .chain(std::iter::once(&a.name))
        {
            assert_eq!(
                cat().get(k).map(|g| g.id.as_str()).ok(),
                Some(a.id.as_str()),
                "{k}"
            );
        }
    }
}

#[test]
fn unknown_ids_get_did_you_mean() {
    for (given, expect) in [
        ("h100-sxmm", "h100-sxm"),
        ("mi300z", "mi300x"),
        ("rtx409", "rtx-4090"),
        ("gaudi4", "gaudi3"),
    ] {
        match cat().get(given) {
            Err(CalcError::UnknownGpu { suggestions, .. }) => {
                assert!(suggestions.len() <= 3, "{suggestions:?}");
                assert!(
                    suggestions.iter().any(|s| s == expect),
                    "{given}: {suggestions:?}"
                );
            }
            other => panic!("{given}: {other:?}"),
        }
    }
    let e = cat().get("zzzzzzzz").err();
    assert!(
        matches!(&e, Some(CalcError::UnknownGpu { suggestions, .. }) if suggestions.is_empty()),
        "{e:?}"
    );
    let msg = cat()
        .get("h100x")
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        msg.contains("did you mean") && msg.contains("h100"),
        "{msg}"
    );
}

fn custom() -> CustomAccelerator {
    CustomAccelerator {
        name: "My H100; 80=GB %".into(),
        memory_gib: 79.6,
        bandwidth_gbps: 3350.0,
        bf16_tflops: 989.5,
        fp8_tflops: Some(1979.0),
        price_usd_per_hour: Some(2.5),
        tdp_w: Some(700.0),
    }
}

#[test]
fn custom_accelerator_validates_and_round_trips() {
    let c = custom();
    let a = c.validate();
    assert!(a.is_ok(), "{a:?}");
    let a = a.unwrap_or_else(|_| gpu("h100").clone());
    assert!(a.id.starts_with("custom:") && a.is_custom(), "{}", a.id);
    assert_eq!(a.id, "custom:my-h100-80-gb");
    // 79.6 GiB = 79.6 × 2^30 B, rounded down.
    assert_eq!(a.capacity().0, (79.6 * 1_073_741_824.0) as u64);
    assert_eq!(a.bandwidth, BytesPerSecond(3350e9));
    close(
        a.ridge(Dtype::Bf16).unwrap_or(0.0),
        989.5e12 / 3350e9,
        "custom ridge",
    );
    assert_eq!(
        CustomAccelerator::from_query(&c.to_query()).ok(),
        Some(c.clone())
    );
    let q = c.to_query();
    assert!(!q.contains(' ') && q.matches('=').count() == 7, "{q}");
    let minimal = CustomAccelerator {
        fp8_tflops: None,
        price_usd_per_hour: None,
        tdp_w: None,
        ..c
    };
    assert_eq!(
        CustomAccelerator::from_query(&minimal.to_query()).ok(),
        Some(minimal)
    );
    assert!(CustomAccelerator::from_query("memory_gib=80;bogus=1").is_err());
    assert!(CustomAccelerator::from_query("memory_gib=80;bandwidth_gbps=x;bf16_tflops=1").is_err());
}

#[test]
fn custom_accelerator_rejects_bad_figures_naming_the_field() {
    for bad in [0.0, -1.0, f64::NAN, 1e308, f64::INFINITY] {
        let cases: [(&str, CustomAccelerator); 6] = [
            (
                "memory_gib",
                CustomAccelerator {
                    memory_gib: bad,
                    ..custom()
                },
            ),
            (
                "bandwidth_gbps",
                CustomAccelerator {
                    bandwidth_gbps: bad,
                    ..custom()
                },
            ),
            (
                "bf16_tflops",
                CustomAccelerator {
                    bf16_tflops: bad,
                    ..custom()
                },
            ),
            (
                "fp8_tflops",
                CustomAccelerator {
                    fp8_tflops: Some(bad),
                    ..custom()
                },
            ),
            (
                "price_usd_per_hour",
                CustomAccelerator {
                    price_usd_per_hour: Some(bad),
                    ..custom()
                },
            ),
            (
                "tdp_w",
                CustomAccelerator {
                    tdp_w: Some(bad),
                    ..custom()
                },
            ),
        ];
        for (field, c) in cases {
            match c.validate() {
                Err(e @ CalcError::OutOfRange { .. }) => {
                    assert!(
                        matches!(&e, CalcError::OutOfRange { field: f, .. } if f.to_string() == field),
                        "{e:?}"
                    );
                    assert!(e.to_string().contains(field), "{e}");
                }
                other => panic!("{field} = {bad}: {other:?}"),
            }
        }
    }
}

#[test]
fn interconnect_presets_and_own_links() {
    assert_eq!(InterconnectPreset::ALL.len(), 6);
    // H200 NVL's own bridge is 900 GB/s (not the 600 of H100 NVL).
    assert_eq!(
        gpu("h200-nvl")
            .own_interconnect()
            .bidirectional
            .map(|b| b.gbps()),
        Some(900.0)
    );
    assert_eq!(
        gpu("h100-nvl")
            .own_interconnect()
            .bidirectional
            .map(|b| b.gbps()),
        Some(600.0)
    );
    // MI300X: 8 GPUs, 7 × 128 GB/s, so one pair sees 64 GB/s each way.
    let mi = gpu("mi300x");
    assert_eq!(
        mi.allreduce_bandwidth(Link::Own, 2).map(|b| b.gbps()),
        Some(64.0)
    );
    // NVSwitch: 450 GB/s each way for any TP within 8; across nodes 50.
    let h = gpu("h100-sxm");
    let sw = Link::Preset(InterconnectPreset::NvlinkSwitch);
    assert_eq!(h.allreduce_bandwidth(sw, 2).map(|b| b.gbps()), Some(450.0));
    assert_eq!(h.allreduce_bandwidth(sw, 16).map(|b| b.gbps()), Some(50.0));
    // The bridge preset beyond 2 GPUs falls to the chip's PCIe (H100 SXM is Gen5: 64 GB/s).
    let br = Link::Preset(InterconnectPreset::NvlinkBridge);
    assert_eq!(h.allreduce_bandwidth(br, 2).map(|b| b.gbps()), Some(300.0));
    assert_eq!(h.allreduce_bandwidth(br, 4).map(|b| b.gbps()), Some(64.0));
    // TPU v4: ICI per-chip bandwidth not published → no figure.
    assert_eq!(gpu("tpu-v4").allreduce_bandwidth(Link::Own, 4), None);
}

/// The `architecture` column: every row has one, with its own source, and it agrees with the
/// independently sourced peak columns: NVIDIA parts compute FP4 natively from Blackwell on
/// (the datasheets' FP4 column is `n/s` before, a figure or unpublished from then), and FP8
/// from Ada and Hopper on (`n/s` on Volta, Turing and Ampere).
#[test]
fn architecture_is_sourced_and_agrees_with_the_peaks() {
    use llm_serving_calculator::core::hardware::catalog::Architecture;
    for a in &cat().accelerators {
        assert_ne!(a.architecture, Architecture::Unknown, "{}", a.id);
        assert!(!a.architecture_source.trim().is_empty(), "{}", a.id);
        assert_eq!(
            Architecture::parse(a.architecture.id()),
            Some(a.architecture)
        );
        if !a.vendor.starts_with("NVIDIA") {
            continue;
        }
        let native_fp4 = !matches!(a.peaks.fp4, Peak::NotSupported);
        assert_eq!(
            native_fp4,
            a.architecture == Architecture::Blackwell,
            "{}: fp4 {:?}, {:?}",
            a.id,
            a.peaks.fp4,
            a.architecture
        );
        let pre_fp8 = matches!(
            a.architecture,
            Architecture::Volta | Architecture::Turing | Architecture::Ampere
        );
        assert_eq!(
            matches!(a.peaks.fp8, Peak::NotSupported),
            pre_fp8,
            "{}",
            a.id
        );
    }
    // The Hopper parts are the ones the name rule the simulator used before found (H100,
    // H200, H800, GH200 in an NVIDIA name): the data changes no result.
    let by_name: HashSet<&str> = cat()
        .accelerators
        .iter()
        .filter(|a| {
            a.vendor.starts_with("NVIDIA")
                && ["H100", "H200", "H800", "GH200"]
                    .iter()
                    .any(|n| a.name.contains(n))
        })
        .map(|a| a.id.as_str())
        .collect();
    let by_data: HashSet<&str> = cat()
        .accelerators
        .iter()
        .filter(|a| a.architecture == Architecture::Hopper)
        .map(|a| a.id.as_str())
        .collect();
    assert_eq!(by_name, by_data);
    assert_eq!(by_data.len(), 7);
    // A custom accelerator's architecture is unknown, with no source.
    let c = custom().validate().expect("valid");
    assert_eq!(c.architecture, Architecture::Unknown);
    assert!(c.architecture_source.is_empty());
}

#[test]
fn an_unknown_architecture_is_refused_with_the_column_named() {
    let full = include_str!("../data/accelerators.csv");
    let bad = full.replacen(",turing,", ",kepler,", 1);
    assert_ne!(bad, full);
    let e = Catalog::parse(&bad).expect_err("kepler is not listed");
    let msg = e.to_string();
    assert!(
        msg.contains("architecture") && msg.contains("kepler"),
        "{msg}"
    );
}
