//! Loading a replica (the chapter: disk → CPU memory → GPU memory, then resident): storage →
//! host memory moves the whole checkpoint once per node (`readers × bytes` when replicas share the
//! device), host → GPU moves each GPU's shard `bytes / tp` over its own link; streamed, the load
//! takes `max(t_storage, t_link)`, else the stage times add; a cold start adds the engine's
//! start-up ([`ENGINE_STARTUP_S`]). [`load_time`] gives it with its derivations.

use super::link::{host_link, HostLink, Storage, HOST_LINK_EFFICIENCY};
use crate::base::derivation::{Derivation, Source, Term};
use crate::base::dtype::Dtype;
use crate::base::error::{CalcError, Phrase};
use crate::base::expr::Expr;
use crate::base::units::{fmt_sig, Bytes, BytesPerSecond, Seconds};
use crate::hardware::catalog::Accelerator;
use crate::model::ModelDesc;
use serde::{Deserialize, Serialize};

/// Engine start-up after the weights are resident, seconds: process start, CUDA and NCCL
/// initialisation, `torch.compile` (tens of seconds without a warm compile cache, per vLLM's
/// torch.compile design notes), CUDA-graph capture (≈ 5–45 s; one public vLLM 0.25 report:
/// 43 s for 371 capture sizes), KV-cache allocation. A rough default for a cold vLLM start;
/// editable (a warm compile cache roughly halves it).
pub const ENGINE_STARTUP_S: f64 = 60.0;

/// Inputs of the load-time model. Every figure is editable.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct LoadInputs {
    /// Storage read bandwidth (decimal B/s), e.g. [`Storage::bandwidth`].
    pub storage_bandwidth: BytesPerSecond,
    /// Host-link bandwidth per direction, nominal (B/s); `None` = from the catalog.
    pub host_link: Option<BytesPerSecond>,
    /// Fraction of the nominal host link reached, 0–1 ([`HOST_LINK_EFFICIENCY`]).
    pub link_efficiency: f64,
    /// Tensor-parallel degree: GPUs that each load `1 / tp` of the weights in parallel.
    pub tp: u64,
    /// Replicas on one node reading from the same storage at the same time (≥ 1).
    pub readers: u64,
    /// Whether storage reads and host-to-GPU copies overlap (pipelined).
    pub overlap: bool,
    /// Engine start-up after the weights are resident, seconds ([`ENGINE_STARTUP_S`]).
    pub engine_startup_s: f64,
    /// Weight precision override; `None` = the checkpoint's own format.
    pub weights_dtype: Option<Dtype>,
}

impl Default for LoadInputs {
    fn default() -> Self {
        LoadInputs {
            storage_bandwidth: Storage::LocalNvme.bandwidth(),
            host_link: None,
            link_efficiency: HOST_LINK_EFFICIENCY,
            tp: 1,
            readers: 1,
            overlap: true,
            engine_startup_s: ENGINE_STARTUP_S,
            weights_dtype: None,
        }
    }
}

impl LoadInputs {
    /// Checks every figure is finite and in range.
    pub fn validate(&self) -> Result<(), CalcError> {
        let bw = self.storage_bandwidth.0;
        if !(bw.is_finite() && bw > 0.0 && bw <= 1e13) {
            return Err(CalcError::out_of_range(
                Phrase::tr("fld_storage_bw"),
                bw / 1e9,
                Phrase::tr("rng_above0_at_most").val("max", "10,000 GB/s"),
            ));
        }
        if let Some(l) = self.host_link {
            if !(l.0.is_finite() && l.0 > 0.0 && l.0 <= 1e13) {
                return Err(CalcError::out_of_range(
                    Phrase::tr("fld_host_link"),
                    l.0 / 1e9,
                    Phrase::tr("rng_above0_at_most").val("max", "10,000 GB/s"),
                ));
            }
        }
        let e = self.link_efficiency;
        if !(e.is_finite() && e > 0.0 && e <= 1.0) {
            return Err(CalcError::out_of_range(
                Phrase::tr("fld_link_eff"),
                e,
                Phrase::tr("rng_fraction"),
            ));
        }
        for (name, v) in [("tp", self.tp), ("readers", self.readers)] {
            CalcError::whole_in(Phrase::verbatim(name), v, (1, 1024))?;
        }
        let s = self.engine_startup_s;
        if !(s.is_finite() && (0.0..=3600.0).contains(&s)) {
            return Err(CalcError::out_of_range(
                Phrase::tr("fld_engine_startup"),
                s,
                Phrase::tr("rng_seconds_from_to")
                    .val("lo", 0)
                    .val("hi", "3,600"),
            ));
        }
        Ok(())
    }
}

/// Which stage of the loading path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StageKind {
    /// Storage → host memory.
    Storage,
    /// Host memory → GPU memory.
    HostToGpu,
}

/// One stage of the loading path.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Stage {
    /// Which stage.
    pub kind: StageKind,
    /// Bytes this stage moves through its slowest single resource (the shared storage device,
    /// or one GPU's own link).
    pub bytes: Bytes,
    /// Effective bandwidth of that resource (efficiency applied), B/s.
    pub bandwidth: BytesPerSecond,
    /// `bytes / bandwidth`.
    pub seconds: Seconds,
    /// The rate at which this stage moves the model as a whole (B/s): storage bandwidth /
    /// readers, or tp × link for the parallel copies. `load = model bytes / slowest rate`.
    pub model_rate: BytesPerSecond,
}

/// Load and cold-start times of one replica.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoadReport {
    /// Accelerator id.
    pub gpu: String,
    /// TP degree.
    pub tp: u64,
    /// Weight bytes of the whole model.
    pub model_bytes: Bytes,
    /// Weight bytes on one GPU.
    pub bytes_per_gpu: Bytes,
    /// The host link used.
    pub host_link: HostLink,
    /// Storage → host memory.
    pub storage: Stage,
    /// Host memory → GPU memory (one GPU; all `tp` run in parallel).
    pub host_to_gpu: Stage,
    /// The slower stage.
    pub slowest: StageKind,
    /// Overlapped: `max(storage, host_to_gpu)`.
    pub pipelined: Seconds,
    /// One after the other: `storage + host_to_gpu`.
    pub sequential: Seconds,
    /// The load time used (pipelined when `overlap`, else sequential).
    pub load: Seconds,
    /// Engine start-up.
    pub engine_startup: Seconds,
    /// Cold start of a new replica: `load + engine_startup`.
    pub cold_start: Seconds,
    /// Notes (translated sentences; serialized and displayed in English).
    pub notes: Vec<Phrase>,
    /// Derivations of the headline numbers.
    pub derivations: Vec<Derivation>,
}

fn weight_bytes(m: &ModelDesc, tp: u64, d: Option<Dtype>) -> Result<(Bytes, Bytes), CalcError> {
    let w = crate::calc::weights::chosen(m, d, tp)?;
    Ok((w.total, w.per_gpu))
}

pub(super) fn resolve_link(
    gpu: &Accelerator,
    given: Option<BytesPerSecond>,
) -> Result<(HostLink, BytesPerSecond), CalcError> {
    match given {
        Some(b) => Ok((HostLink::Custom, b)),
        None => host_link(gpu).ok_or_else(|| CalcError::MissingSpec {
            gpu: gpu.name.clone(),
            what: Phrase::tr("what_host_link"),
        }),
    }
}

/// Load time of one replica of `m` on `tp` GPUs of `gpu` (the loading module's docs give the model).
///
/// `t_storage = readers × W / BW_storage`; `t_link = (W / tp) / (link × e_link)`;
/// pipelined `load = max(t_storage, t_link)` = `W / min(BW_storage / readers, tp × link ×
/// e_link)`; sequential `load = t_storage + t_link`; `cold start = load + t_engine`.
pub fn load_time(
    m: &ModelDesc,
    gpu: &Accelerator,
    inp: &LoadInputs,
) -> Result<LoadReport, CalcError> {
    inp.validate()?;
    let (total, per_gpu) = weight_bytes(m, inp.tp, inp.weights_dtype)?;
    let (link_kind, link_nominal) = resolve_link(gpu, inp.host_link)?;
    let link = BytesPerSecond(link_nominal.0 * inp.link_efficiency);
    let storage_bytes = total * inp.readers;
    let storage = Stage {
        kind: StageKind::Storage,
        bytes: storage_bytes,
        bandwidth: inp.storage_bandwidth,
        seconds: storage_bytes / inp.storage_bandwidth,
        model_rate: BytesPerSecond(inp.storage_bandwidth.0 / inp.readers as f64),
    };
    let host_to_gpu = Stage {
        kind: StageKind::HostToGpu,
        bytes: per_gpu,
        bandwidth: link,
        seconds: Seconds(host_to_gpu_expr(per_gpu, link_nominal, inp.link_efficiency).eval()),
        model_rate: BytesPerSecond(link.0 * inp.tp as f64),
    };
    let slowest = if storage.seconds.0 >= host_to_gpu.seconds.0 {
        StageKind::Storage
    } else {
        StageKind::HostToGpu
    };
    let pipelined = Seconds(storage.seconds.0.max(host_to_gpu.seconds.0));
    let sequential = storage.seconds + host_to_gpu.seconds;
    let load = if inp.overlap { pipelined } else { sequential };
    let engine_startup = Seconds(inp.engine_startup_s);
    let cold_start = load + engine_startup;
    let mut notes = Vec::new();
    if inp.tp > 1 {
        let key = if inp.readers > 1 {
            "load_note_tp_shards_readers"
        } else {
            "load_note_tp_shards"
        };
        notes.push(
            Phrase::tr(key)
                .val("tp", inp.tp)
                .val("shard", per_gpu.fmt_gb())
                .val("total", total.fmt_gb())
                .val("readers", inp.readers),
        );
    }
    if slowest == StageKind::Storage {
        notes.push(Phrase::tr("load_note_storage_bottleneck"));
    }
    notes.push(Phrase::tr("load_note_cold_start_excludes"));
    let derivations = load_derivations(&LoadD {
        total,
        per_gpu,
        inp,
        link_nominal,
        storage: &storage,
        host_to_gpu: &host_to_gpu,
        load,
        cold_start,
    });
    Ok(LoadReport {
        gpu: gpu.id.clone(),
        tp: inp.tp,
        model_bytes: total,
        bytes_per_gpu: per_gpu,
        host_link: link_kind,
        storage,
        host_to_gpu,
        slowest,
        pipelined,
        sequential,
        load,
        engine_startup,
        cold_start,
        notes,
        derivations,
    })
}

struct LoadD<'a> {
    total: Bytes,
    per_gpu: Bytes,
    inp: &'a LoadInputs,
    link_nominal: BytesPerSecond,
    storage: &'a Stage,
    host_to_gpu: &'a Stage,
    load: Seconds,
    cold_start: Seconds,
}

/// A count the user entered in the field of the same name as its symbol (`readers`, `tp`).
fn user_count(name: &str, name_key: &str, n: u64) -> Term {
    Term::num(name, name_key, n as f64, "", Source::User(name.into()))
}

/// The host link's nominal bandwidth, `link`: the user's figure when given, else the one the
/// catalog's PCIe generation implies.
pub(super) fn host_link_term(link_nominal: BytesPerSecond, user_given: bool) -> Term {
    let source = if user_given {
        Source::User("host_link".into())
    } else {
        Source::Catalog("pcie_gen".into())
    };
    Term::num(
        "BW_link",
        "term_host_link",
        link_nominal.gbps(),
        "GB/s",
        source,
    )
}

/// The load's derivations: the storage stage, the host-to-GPU stage, the load and the cold
/// start.
fn load_derivations(d: &LoadD) -> Vec<Derivation> {
    vec![
        storage_derivation(d),
        host_to_gpu_derivation(d),
        load_time_derivation(d),
        cold_start_derivation(d),
    ]
}

/// A time in seconds as a derivation shows it: `12.3 s`.
fn seconds_text(s: f64) -> String {
    format!("{} s", fmt_sig(s))
}

/// The storage stage's derivation: `n_r × W / BW_storage`.
fn storage_derivation(d: &LoadD) -> Derivation {
    let (w_gb, bw) = (d.total.gb(), d.inp.storage_bandwidth);
    let e = Expr::over(
        Expr::mul([
            Expr::sym("n_r", d.inp.readers.to_string(), d.inp.readers),
            Expr::sym("W", format!("{} GB", fmt_sig(w_gb)), d.total.0),
        ]),
        Expr::sym("BW_storage", format!("{} GB/s", fmt_sig(bw.gbps())), bw.0),
    );
    Derivation {
        result: seconds_text(d.storage.seconds.0),
        terms: vec![
            Term::num(
                "W",
                "term_weights",
                w_gb,
                "GB",
                Source::Derived("src_checkpoint_weight_bytes".into()),
            ),
            Term::num(
                "BW_storage",
                "term_storage_bandwidth",
                bw.gbps(),
                "GB/s",
                Source::User("storage".into()),
            ),
            Term::num(
                "n_r",
                "term_readers",
                d.inp.readers as f64,
                "",
                Source::User("readers".into()),
            ),
        ],
        ..Derivation::of("load_storage_time", &e)
    }
}

/// The host-to-GPU stage's time, `(W / tp) / (BW_link × e_link)` seconds: one GPU's
/// `per_gpu` bytes (its share as the weights module counts it) over a link of `link_nominal`
/// at efficiency `e`.
fn host_to_gpu_expr(per_gpu: Bytes, link_nominal: BytesPerSecond, e: f64) -> Expr {
    let share = Expr::over(Expr::sym("W", "", f64::NAN), Expr::sym("tp", "", f64::NAN));
    Expr::over(
        Expr::computed(
            Expr::paren(share),
            format!("{} GB", fmt_sig(per_gpu.gb())),
            per_gpu.0,
        ),
        Expr::mul([
            Expr::sym(
                "BW_link",
                format!("{} GB/s", fmt_sig(link_nominal.gbps())),
                link_nominal.0,
            ),
            Expr::sym("e_link", fmt_sig(e), e),
        ]),
    )
}

/// The host-to-GPU stage's derivation ([`host_to_gpu_expr`]).
fn host_to_gpu_derivation(d: &LoadD) -> Derivation {
    let e = host_to_gpu_expr(d.per_gpu, d.link_nominal, d.inp.link_efficiency);
    Derivation {
        result: seconds_text(d.host_to_gpu.seconds.0),
        terms: vec![
            Term::num(
                "W / tp",
                "term_weights_per_gpu",
                d.per_gpu.gb(),
                "GB",
                Source::Derived("src_weights_over_tp".into()),
            ),
            host_link_term(d.link_nominal, d.inp.host_link.is_some()),
            Term::num(
                "e_link",
                "term_link_efficiency",
                d.inp.link_efficiency,
                "",
                Source::Default("src_pinned_copy".into()),
            ),
            user_count("tp", "term_tp", d.inp.tp),
        ],
        ..Derivation::of("load_host_to_gpu_time", &e)
    }
}

/// The load's derivation: `max(t_storage, t_link)` when the stages overlap, else their sum.
fn load_time_derivation(d: &LoadD) -> Derivation {
    Derivation {
        title_key: "load_time".into(),
        formula: if d.inp.overlap {
            "max(t_storage, t_link)".into()
        } else {
            "t_storage + t_link".into()
        },
        substituted: format!(
            "{} s, {} s",
            fmt_sig(d.storage.seconds.0),
            fmt_sig(d.host_to_gpu.seconds.0)
        ),
        result: seconds_text(d.load.0),
        ..Default::default()
    }
}

/// The cold start's derivation: `t_load + t_engine`.
fn cold_start_derivation(d: &LoadD) -> Derivation {
    let engine = d.inp.engine_startup_s;
    let e = Expr::add([
        Expr::sym("t_load", seconds_text(d.load.0), d.load.0),
        Expr::sym("t_engine", seconds_text(engine), engine),
    ]);
    Derivation {
        result: seconds_text(d.cold_start.0),
        terms: vec![Term::num(
            "t_engine",
            "term_engine_startup",
            engine,
            "s",
            Source::Default("src_engine_startup_rough".into()),
        )],
        ..Derivation::of("cold_start", &e)
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{gpu, model};
    use super::*;

    /// The load notes are translated phrases: the English reads with the shard, the total and
    /// the readers filled in, the Korean is Korean with every placeholder filled.
    #[test]
    fn load_notes_read_in_both_languages() {
        use crate::base::Lang;
        let m = model("meta-llama__Meta-Llama-3.1-8B");
        let inp = LoadInputs {
            tp: 2,
            readers: 3,
            storage_bandwidth: BytesPerSecond(1e8),
            ..LoadInputs::default()
        };
        let r = load_time(&m, gpu("h100-sxm"), &inp).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.slowest, StageKind::Storage);
        let en: Vec<String> = r.notes.iter().map(|n| n.text(Lang::En)).collect();
        assert_eq!(en.len(), 3, "{en:?}");
        let shards = format!(
            "Each of the 2 GPUs copies its own {} shard",
            r.bytes_per_gpu.fmt_gb()
        );
        assert!(en[0].starts_with(&shards), "{}", en[0]);
        assert!(en[0].contains(&r.model_bytes.fmt_gb()), "{}", en[0]);
        assert!(en[0].ends_with(", 3 times for 3 replicas sharing the device."));
        assert!(en[1].starts_with("Storage is the bottleneck"));
        assert!(en[2].starts_with("Cold start excludes"));
        for n in &r.notes {
            let ko = n.text(Lang::Ko);
            assert!(ko.chars().any(|c| ('가'..='힣').contains(&c)), "{ko}");
            assert!(!ko.contains('{'), "{ko}");
        }
    }

    #[test]
    fn load_is_bytes_over_the_slowest_stage() {
        // Llama-2-7B bf16: W = 13,476,831,232 B (WORKED_EXAMPLES §1).
        let m = model("meta-llama__Llama-2-7b-hf");
        let g = gpu("h100-sxm");
        let w = 13_476_831_232.0;
        for storage in Storage::ALL {
            for tp in [1u64, 2, 4] {
                let inp = LoadInputs {
                    storage_bandwidth: storage.bandwidth(),
                    tp,
                    ..LoadInputs::default()
                };
                let r = load_time(&m, g, &inp).unwrap_or_else(|e| panic!("{e}"));
                assert_eq!(r.model_bytes.0 as f64, w);
                // Slowest effective rate at which the model moves: storage, or tp parallel links.
                let link = 64e9 * HOST_LINK_EFFICIENCY;
                let slowest = storage.bandwidth().0.min(tp as f64 * link);
                // Norm weights are replicated on every rank (not split), hence the tolerance.
                assert!(
                    (r.load.0 / (w / slowest) - 1.0).abs() < 1e-4,
                    "{storage:?} tp {tp}: {} vs {}",
                    r.load.0,
                    w / slowest
                );
                assert_eq!(r.load, r.pipelined);
                assert!((r.cold_start.0 - r.load.0 - ENGINE_STARTUP_S).abs() < 1e-9);
            }
        }
        // NVMe at 7 GB/s vs a Gen5 link at 51.2 GB/s: storage is the bottleneck.
        let r = load_time(&m, g, &LoadInputs::default()).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(r.slowest, StageKind::Storage);
        assert!((r.load.0 - w / 7e9).abs() < 1e-9);
        // Without overlap the stages add.
        let seq = load_time(
            &m,
            g,
            &LoadInputs {
                overlap: false,
                ..LoadInputs::default()
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!((seq.load.0 - (w / 7e9 + w / (64e9 * HOST_LINK_EFFICIENCY))).abs() < 1e-9);
    }

    #[test]
    fn shared_storage_slows_every_reader() {
        let m = model("meta-llama__Llama-2-7b-hf");
        let one =
            load_time(&m, gpu("l40s"), &LoadInputs::default()).unwrap_or_else(|e| panic!("{e}"));
        let eight = load_time(
            &m,
            gpu("l40s"),
            &LoadInputs {
                readers: 8,
                ..LoadInputs::default()
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
        assert!((eight.storage.seconds.0 / one.storage.seconds.0 - 8.0).abs() < 1e-9);
    }

    #[test]
    fn bad_inputs_are_errors() {
        let m = model("meta-llama__Llama-2-7b-hf");
        let g = gpu("h100-sxm");
        for inp in [
            LoadInputs {
                storage_bandwidth: BytesPerSecond(0.0),
                ..LoadInputs::default()
            },
            LoadInputs {
                storage_bandwidth: BytesPerSecond(f64::NAN),
                ..LoadInputs::default()
            },
            LoadInputs {
                tp: 0,
                ..LoadInputs::default()
            },
            LoadInputs {
                link_efficiency: 1.5,
                ..LoadInputs::default()
            },
            LoadInputs {
                engine_startup_s: -1.0,
                ..LoadInputs::default()
            },
        ] {
            assert!(load_time(&m, g, &inp).is_err(), "{inp:?}");
        }
        // No PCIe generation in the catalog and no figure given → a clear error.
        assert!(load_time(&m, gpu("tpu-v4"), &LoadInputs::default()).is_err());
        let given = LoadInputs {
            host_link: Some(BytesPerSecond::from_gbps(16.0)),
            ..LoadInputs::default()
        };
        assert!(load_time(&m, gpu("tpu-v4"), &given).is_ok());
    }
}
