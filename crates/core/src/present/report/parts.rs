//! The parts of a report the app keeps across workload edits: the model-level part
//! ([`ModelPart`], under its [`ModelChoices`]) and each compared GPU's ([`GpuPart`]).

use super::derivations::{kv_token_derivation, params_derivation, titled};
use crate::base::derivation::Derivation;
use crate::base::dtype::Dtype;
use crate::base::error::CalcError;
use crate::base::units::Bytes;
use crate::calc::memory::{self, KvProfile};
use crate::calc::{kv, weights};
use crate::hardware::catalog::{Accelerator, Architecture, Catalog};
use crate::model::ModelDesc;
use crate::scenario::{GpuChoice, Scenario};

pub(crate) fn accelerator_of(g: &GpuChoice, catalog: &Catalog) -> Result<Accelerator, CalcError> {
    match g {
        GpuChoice::Catalog(id) => catalog.get(id).cloned(),
        GpuChoice::Custom(c) => c.validate(),
    }
}

/// What [`ModelPart::new`] reads of a scenario besides its model: whether the MTP layers are
/// loaded, the TP degree and the chosen weight and KV precisions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ModelChoices {
    /// [`Scenario::include_mtp`].
    pub include_mtp: bool,
    /// [`Scenario::tp`].
    pub tp: u32,
    /// [`Scenario::weight_dtype`].
    pub weight_dtype: Option<Dtype>,
    /// [`Scenario::kv_dtype`].
    pub kv_dtype: Option<Dtype>,
}

impl ModelChoices {
    /// The model-level choices of `s`.
    pub fn of(s: &Scenario) -> ModelChoices {
        ModelChoices {
            include_mtp: s.include_mtp,
            tp: s.tp,
            weight_dtype: s.weight_dtype,
            kv_dtype: s.kv_dtype,
        }
    }
}

/// The part of a report that depends only on the model and its [`ModelChoices`]: the weight
/// bytes (and at FP8 and INT4, which the "what would fit" suggestions try), the KV cache per
/// token, the parameter and KV-per-token derivations. The app keeps it while the workload is
/// edited (context length, concurrency, GPUs, budget rule): such an edit only runs
/// [`evaluate_with`](super::evaluate_with).
#[derive(Debug, Clone, PartialEq)]
pub struct ModelPart {
    /// The model, with [`ModelChoices::include_mtp`] applied.
    pub(super) model: ModelDesc,
    /// The choices it was made with.
    pub(super) choices: ModelChoices,
    /// The weight precision in effect.
    pub(super) weight_dtype: Dtype,
    /// The KV-cache precision in effect.
    pub(super) kv_dtype: Dtype,
    /// Weight bytes at the chosen precision, whole and per GPU of the replica.
    pub(super) weights: weights::WeightBytes,
    /// One request's KV cache on the whole model (TP 1).
    pub(super) whole: KvProfile,
    /// One request's KV cache on one GPU of a replica.
    pub(super) per_gpu: KvProfile,
    /// KV bytes per token, whole model, all layers.
    pub(super) kv_per_token: Bytes,
    /// Derivations of the parameter count and of the KV bytes per token.
    pub(super) d_params: Derivation,
    pub(super) d_kv_token: Derivation,
    /// Weights per GPU at FP8 and INT4 (those that can be computed).
    pub(super) smaller: Vec<(Dtype, Bytes)>,
}

impl ModelPart {
    /// The model-level part of a report on `model` under `choices`. Errors: a TP degree the
    /// model cannot be split by, a model whose KV cache cannot be sized.
    pub fn new(model: ModelDesc, choices: ModelChoices) -> Result<ModelPart, CalcError> {
        Self::made::<true>(model, choices)
    }

    /// [`ModelPart::new`] with the derivations it builds itself (parameters, KV per token)
    /// carrying their title only: for a report whose math is not shown
    /// ([`evaluate_titles_only`](super::evaluate_titles_only)).
    pub(super) fn titles_only(
        model: ModelDesc,
        choices: ModelChoices,
    ) -> Result<ModelPart, CalcError> {
        Self::made::<false>(model, choices)
    }

    /// The part, its own derivations in full (`MATH`) or as titles only.
    fn made<const MATH: bool>(
        mut model: ModelDesc,
        choices: ModelChoices,
    ) -> Result<ModelPart, CalcError> {
        model.load_mtp = choices.include_mtp;
        let tp = u64::from(choices.tp.max(1));
        let weight_dtype = choices.weight_dtype.unwrap_or(model.weights.dtype);
        let kv_dtype = choices
            .kv_dtype
            .unwrap_or_else(|| kv::default_kv_dtype(&model));
        // Weight bytes at the chosen precision (`None` = the checkpoint's own format), whole
        // and per GPU of the replica: the one rule of `weights` (group scales, experts-only
        // quantization, replicated parts, the TP check).
        let weights = weights::chosen(&model, choices.weight_dtype, tp)?;
        // The model's own figures, on no GPU in particular: a GPU whose cache layout differs
        // (`fp8_ds_mla` on Hopper) has its own profile in its part (`GpuFixed::profile`).
        let whole = KvProfile::from_model(&model, kv_dtype, 1, Architecture::Unknown)?;
        let per_gpu = KvProfile::from_model(&model, kv_dtype, tp, Architecture::Unknown)?;
        let kv_per_token = whole.per_token_all_layers();
        let d_params = if MATH {
            params_derivation(&model)
        } else {
            titled("params_total")
        };
        let d_kv_token = if !MATH {
            titled("kv_per_token")
        } else {
            match kv::per_token(&model, kv_dtype, 1) {
                Ok(k) if k.bytes == kv_per_token => {
                    let mut d = k.derivation;
                    d.title_key = "kv_per_token".into();
                    d
                }
                _ => kv_token_derivation(&model, kv_dtype, kv_per_token),
            }
        };
        let smaller = smaller_weights(&model, tp);
        Ok(ModelPart {
            model,
            choices,
            weight_dtype,
            kv_dtype,
            weights,
            whole,
            per_gpu,
            kv_per_token,
            d_params,
            d_kv_token,
            smaller,
        })
    }

    /// The choices it was made with (a scenario with other [`ModelChoices`] needs another).
    pub fn choices(&self) -> ModelChoices {
        self.choices
    }
}

/// The part of one compared GPU's report that depends only on the GPU and the model-level
/// part ([`ModelPart`]: the model, TP, the weight precision), not on the workload: the
/// accelerator, the textbook's capacities and activation reserve, and what vLLM starts from
/// (its total memory, the weights as loaded, the profiling run's activation peak), each
/// with its derivation. The app keeps one per GPU while the context length, the concurrency
/// or the budget rule is edited; such an edit only runs
/// [`evaluate_with_gpus`](super::evaluate_with_gpus).
#[derive(Debug, Clone, PartialEq)]
pub struct GpuPart {
    /// The GPU it was made for.
    pub(super) choice: GpuChoice,
    /// What was found, or why the GPU cannot be evaluated.
    pub(super) fixed: Result<GpuFixed, CalcError>,
}

/// [`GpuPart`]'s findings.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct GpuFixed {
    pub(super) acc: Accelerator,
    pub(super) textbook: memory::TextbookGpu,
    pub(super) start: memory::VllmStart,
    /// One request's KV cache on one GPU of a replica in this GPU's cache layout, where it
    /// differs from the model's ([`ModelPart`]'s `per_gpu`): a sparse-attention model's fp8
    /// latents in vLLM's `fp8_ds_mla` on Hopper (`kv::uses_fp8_ds_mla`).
    pub(super) profile: Option<KvProfile>,
}

impl GpuFixed {
    /// The per-GPU KV profile its blocks, concurrency and fit are counted with: its own, else
    /// the model's.
    pub(super) fn profile<'a>(&'a self, part: &'a ModelPart) -> &'a KvProfile {
        self.profile.as_ref().unwrap_or(&part.per_gpu)
    }
}

impl GpuPart {
    /// The part of `choice` for the model-level part `part`.
    pub fn new(part: &ModelPart, choice: &GpuChoice, catalog: &Catalog) -> GpuPart {
        GpuPart {
            choice: choice.clone(),
            fixed: gpu_fixed(part, choice, catalog),
        }
    }

    /// The GPU it was made for.
    pub fn choice(&self) -> &GpuChoice {
        &self.choice
    }
}

/// The accelerator, then the textbook's and vLLM's per-GPU inputs (its errors in this order:
/// the accelerator, the textbook, vLLM's start).
fn gpu_fixed(part: &ModelPart, g: &GpuChoice, catalog: &Catalog) -> Result<GpuFixed, CalcError> {
    let acc = accelerator_of(g, catalog)?;
    // The report's textbook reserve is estimated at TP 1 (`textbook_for`).
    let textbook = memory::TextbookGpu::new(&part.model, &acc, 1)?;
    let (tp, weight_dtype) = (part.weights.tp, part.choices.weight_dtype);
    // The context length is a per-workload knob (`VllmStart::inputs_under`); 1 stands in.
    let e = memory::VllmEngine::defaults(&acc, tp, weight_dtype, 1);
    let start = memory::vllm_start(&part.model, &acc, &e)?;
    let profile = if kv::uses_fp8_ds_mla(&part.model, part.kv_dtype, acc.architecture) {
        Some(KvProfile::from_model(
            &part.model,
            part.kv_dtype,
            tp,
            acc.architecture,
        )?)
    } else {
        None
    };
    Ok(GpuFixed {
        acc,
        textbook,
        start,
        profile,
    })
}

/// The GPU parts of `gpus` for `part`, in that order: a part of `kept` (made with the same
/// `part`) is reused for each GPU it was made for, the others are made.
pub fn gpu_parts(
    part: &ModelPart,
    gpus: &[GpuChoice],
    catalog: &Catalog,
    kept: Vec<GpuPart>,
) -> Vec<GpuPart> {
    let mut kept: Vec<Option<GpuPart>> = kept.into_iter().map(Some).collect();
    gpus.iter()
        .map(|g| {
            kept.iter_mut()
                .find(|k| k.as_ref().is_some_and(|k| k.choice == *g))
                .and_then(Option::take)
                .unwrap_or_else(|| GpuPart::new(part, g, catalog))
        })
        .collect()
}

/// Weights per GPU at FP8 and INT4, for the "what would fit" suggestions.
pub(super) fn smaller_weights(model: &ModelDesc, tp: u64) -> Vec<(Dtype, Bytes)> {
    [Dtype::Fp8, Dtype::Int4]
        .iter()
        .filter_map(|d| Some((*d, weights::chosen(model, Some(*d), tp).ok()?.per_gpu)))
        .collect()
}
