//! The hardware figures a pass is timed with ([`Hardware`]): the compute precision the chip
//! runs the weights at ([`compute_dtype`]: W8A8-style for fp8/fp6/fp4, 16-bit activations for
//! int4/int8, falling back when the chip lacks the precision), its dense peak and DRAM bandwidth,
//! and the link an all-reduce crosses, with the notes ([`PerfNote`]) on what was assumed.

use crate::base::dtype::Dtype;
use crate::base::error::{CalcError, Phrase};
use crate::base::i18n::{fill, tr, Lang};
use crate::base::units::{BytesPerSecond, FlopsPerSecond};
use crate::hardware::catalog::{Accelerator, Link, PrecisionNote, PrecisionReason};
use serde::{Deserialize, Serialize};

/// The accelerator figures the model reads, resolved once.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Hardware {
    /// Dense peak at the compute precision (infinite when none is published: compute not timed).
    pub peak: FlopsPerSecond,
    /// Peak DRAM bandwidth.
    pub bandwidth: BytesPerSecond,
    /// One-direction GPU-to-GPU bandwidth used by all-reduces (`None` when there is no link).
    pub link_one_way: Option<BytesPerSecond>,
    /// The precision the matmuls run at.
    pub compute_dtype: Dtype,
}

/// The precision the matmuls run at, and a note when it differs from the weights'.
///
/// fp8 / fp6 / fp4 weights are served W8A8-style (activations quantized too, as TensorRT-LLM
/// does), so they ask for that precision; int4 / int8 weights are weight-only quantization
/// (dequantized, 16-bit activations). The catalog's `compute_precision` then falls back where
/// the chip lacks the precision (fp8 on A100 → 16-bit).
pub fn compute_dtype(weights: Dtype, gpu: &Accelerator) -> (Dtype, Option<PerfNote>) {
    let act = match weights {
        Dtype::Fp8 | Dtype::Fp6 | Dtype::Fp4 => weights,
        Dtype::Fp32 => Dtype::Fp32,
        _ => Dtype::Bf16,
    };
    let (d, note) = gpu.compute_precision(weights, act);
    (
        d,
        note.map(|note| PerfNote::Precision {
            gpu: gpu.name.clone(),
            note,
        }),
    )
}

/// A note on a performance result, typed so that the UI can say it in either language
/// ([`PerfNote::message`]); the CLI's JSON `notes` carry the English sentences.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "snake_case")]
pub enum PerfNote {
    /// The matmuls run at another precision than the weights ask for (`core::catalog`).
    Precision {
        /// Accelerator display name.
        gpu: String,
        /// What was asked, what is used and why.
        note: PrecisionNote,
    },
    /// No dense peak is published at the compute precision (A10G): compute time is left out,
    /// so TTFT and large-batch times are lower bounds.
    NoPeak {
        /// Accelerator display name.
        gpu: String,
        /// The compute precision without a published peak.
        dtype: Dtype,
    },
    /// The TP degree is larger than the scale-up domain: the replica crosses nodes.
    CrossesNodes {
        /// Accelerator display name.
        gpu: String,
        /// Tensor-parallel degree.
        tp: u64,
        /// GPUs in one scale-up domain.
        domain: u32,
    },
    /// Quick mode: no layer structure, so attention and the KV cache are not timed.
    QuickMode,
    /// The requested batch does not fit in memory.
    BatchDoesNotFit {
        /// Accelerator display name.
        gpu: String,
        /// Tensor-parallel degree.
        tp: u64,
        /// Requested batch.
        batch: u64,
        /// Tokens per sequence (prompt + output).
        tokens: u64,
        /// Largest batch that fits.
        max_batch: u64,
    },
}

impl PerfNote {
    /// Stable code (the JSON tag; CLI `note_codes`).
    pub const fn code(&self) -> &'static str {
        match self {
            PerfNote::Precision { .. } => "precision",
            PerfNote::NoPeak { .. } => "no_peak",
            PerfNote::CrossesNodes { .. } => "crosses_nodes",
            PerfNote::QuickMode => "quick_mode",
            PerfNote::BatchDoesNotFit { .. } => "batch_does_not_fit",
        }
    }

    /// The translation key of the sentence.
    pub const fn key(&self) -> &'static str {
        match self {
            PerfNote::Precision { .. } => "perf_note_precision",
            PerfNote::NoPeak { .. } => "perf_note_no_peak",
            PerfNote::CrossesNodes { .. } => "perf_note_crosses_nodes",
            PerfNote::QuickMode => "perf_note_quick_mode",
            PerfNote::BatchDoesNotFit { .. } => "perf_note_batch_no_fit",
        }
    }

    /// The sentence in a language, placeholders filled.
    pub fn message(&self, lang: Lang) -> String {
        let t = tr(lang, self.key());
        match self {
            PerfNote::Precision { gpu, note } => {
                fill(t, &[("gpu", gpu), ("message", &note.message(lang))])
            }
            PerfNote::NoPeak { gpu, dtype } => fill(t, &[("gpu", gpu), ("dtype", dtype.id())]),
            PerfNote::CrossesNodes { gpu, tp, domain } => fill(
                t,
                &[
                    ("gpu", gpu),
                    ("tp", &tp.to_string()),
                    ("domain", &domain.to_string()),
                ],
            ),
            PerfNote::QuickMode => t.to_string(),
            PerfNote::BatchDoesNotFit {
                gpu,
                tp,
                batch,
                tokens,
                max_batch,
            } => fill(
                t,
                &[
                    ("gpu", gpu),
                    ("tp", &tp.to_string()),
                    ("batch", &batch.to_string()),
                    ("tokens", &tokens.to_string()),
                    ("max_batch", &max_batch.to_string()),
                ],
            ),
        }
    }
}

/// Resolves the hardware figures for a weight precision and TP degree (the chip's own link).
pub fn hardware(
    gpu: &Accelerator,
    weights: Dtype,
    tp: u64,
) -> Result<(Hardware, Vec<PerfNote>), CalcError> {
    let (cd, note) = compute_dtype(weights, gpu);
    if !(gpu.bandwidth.0.is_finite() && gpu.bandwidth.0 > 0.0) {
        return Err(CalcError::MissingSpec {
            gpu: gpu.name.clone(),
            what: Phrase::tr("what_mem_bw"),
        });
    }
    let mut notes: Vec<PerfNote> = note.into_iter().collect();
    // No published peak (A10G): time only the bytes, and say the result is a lower bound
    // (this note replaces the catalog's shorter "no published peak" one).
    let peak = match gpu.peak_flops(cd).filter(|p| p.0.is_finite() && p.0 > 0.0) {
        Some(p) => p,
        None => {
            notes.retain(|n| {
                !matches!(n, PerfNote::Precision { note, .. } if note.reason == PrecisionReason::NoPublishedPeak)
            });
            notes.push(PerfNote::NoPeak {
                gpu: gpu.name.clone(),
                dtype: cd,
            });
            FlopsPerSecond(f64::INFINITY)
        }
    };
    let tp32 = u32::try_from(tp).unwrap_or(u32::MAX);
    let link = gpu.allreduce_bandwidth(Link::Own, tp32);
    if tp > 1 {
        if link.is_none() {
            return Err(CalcError::MissingSpec {
                gpu: gpu.name.clone(),
                what: Phrase::tr("what_link_bw"),
            });
        }
        if tp > u64::from(gpu.interconnect.domain_size.max(1)) {
            notes.push(PerfNote::CrossesNodes {
                gpu: gpu.name.clone(),
                tp,
                domain: gpu.interconnect.domain_size,
            });
        }
    }
    Ok((
        Hardware {
            peak,
            bandwidth: gpu.bandwidth,
            link_one_way: link,
            compute_dtype: cd,
        },
        notes,
    ))
}
