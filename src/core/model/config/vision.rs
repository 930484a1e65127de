//! Vision towers of multimodal configs, counted as the transformers modelling code builds
//! them (patch embedding, position embedding, encoder layers, projector/merger). A serving
//! engine loads them on the GPU with the language model.
//!
//! - SigLIP (Gemma 3): patch conv `C·p²·v + v`, positions `(image/p)²·v`, per layer two
//!   LayerNorms `4v`, q/k/v/o with biases `4v² + 4v`, MLP `2·v·I + I + v`; post LayerNorm
//!   `2v`; Gemma 3 projector `v·h` + its RMSNorm `v`.
//! - Qwen2.5-VL: patch conv `C·t·p²·v` (no bias), per block two RMSNorms `2v`, qkv `3v² + 3v`,
//!   proj `v² + v`, gated MLP `3·v·I + 2I + v`; merger RMSNorm `v`, `(v·m²)² + v·m²`,
//!   `v·m²·o + o`.
//! - Qwen3-VL: patch conv with bias, learned positions `N·v`, per block two LayerNorms `4v`,
//!   qkv and proj with biases, plain MLP `2·v·I + I + v`; merger LayerNorm `2v` (the
//!   deep-stack mergers normalise after the shuffle: `2·v·m²`) and the two linears with biases.
//! - Pixtral (Mistral 3.1): patch conv `C·p²·v`, ln_pre `v`, per layer two RMSNorms `2v`,
//!   q/k/v/o `4v²`, gated MLP `3·v·I`; Mistral 3 projector: RMSNorm `v`, patch merger
//!   `v·m²·v`, `v·h` and `h·h` (biases with `multimodal_projector_bias`).
//! - Llama 4: unfold patch linear `C·p²·v`, class embedding `v`, positions
//!   `((image/p)² + 1)·v`, pre/post LayerNorms `4v`, per layer two LayerNorms `4v`, q/k/v/o
//!   with biases, MLP `2·v·I + I + v`; pixel-shuffle MLP `I·P_in + P_out²`; projector
//!   `vision_output_dim·h`.

use super::defaults::{class_for, ClassDefaults};
use super::reader::Reader;
use super::{add, mul};
use crate::core::base::error::CalcError;
use serde_json::{Map, Value};

const W: &str = "ovf_vision_params";

/// A reader over the vision config with its class.
fn reader<'a>(vc: &'a Map<String, Value>, class: Option<&'static ClassDefaults>) -> Reader<'a> {
    Reader::new(vc, vc).with_classes(class, None)
}

fn req(v: &mut Reader, field: &str, key: &'static str) -> Result<u64, CalcError> {
    v.req((field, key), "why_size_vision")
}

/// The four sizes every ViT tower states, read in this order (the ledger's order): width,
/// MLP width, layers, patch size.
fn tower(v: &mut Reader) -> Result<(u64, u64, u64, u64), CalcError> {
    let vh = req(v, "vision.hidden_size", "hidden_size")?;
    let vi = req(v, "vision.intermediate_size", "intermediate_size")?;
    let vl = v.layers()?;
    let patch = req(v, "vision.patch_size", "patch_size")?;
    Ok((vh, vi, vl, patch))
}

/// The image channels (3 unless the config says otherwise).
fn channels(v: &mut Reader) -> Result<u64, CalcError> {
    v.or(
        ("vision.num_channels", "num_channels"),
        3,
        "ldg_siglip_default_3_channels",
    )
}

/// SigLIP (Gemma 3) and the Gemma 3 projector into a language model of width `text_h`.
pub(super) fn siglip(
    r: &mut Reader,
    vc: &Map<String, Value>,
    text_h: u64,
) -> Result<u64, CalcError> {
    let mut v = reader(vc, class_for("siglip_vision_model"));
    let (vh, vi, vl, patch) = tower(&mut v)?;
    let image = req(&mut v, "vision.image_size", "image_size")?;
    let ch = channels(&mut v)?;
    let per_layer = add(
        W,
        &[
            mul(W, &[4, vh, vh])?,
            mul(W, &[8, vh])?,
            mul(W, &[2, vh, vi])?,
            vi,
            vh,
        ],
    )?;
    let side = image / patch;
    let total = add(
        W,
        &[
            mul(W, &[vl, per_layer])?,
            mul(W, &[ch, patch, patch, vh])?,
            vh,
            mul(W, &[side, side, vh])?,
            mul(W, &[2, vh])?,
            mul(W, &[vh, text_h])?,
            vh,
        ],
    )?;
    r.ledger.extend(v.ledger);
    r.derived(
        "vision_parameters",
        total,
        "ldg_siglip_vision_tower_gemma_3_projector_counte",
    );
    Ok(total)
}

/// The Qwen2.5-VL / Qwen3-VL vision tower (`qwen3` selects the Qwen3-VL layout).
pub(super) fn qwen_vl(
    r: &mut Reader,
    vc: &Map<String, Value>,
    class: Option<&'static ClassDefaults>,
    qwen3: bool,
) -> Result<u64, CalcError> {
    let mut v = reader(vc, class);
    let vh = req(&mut v, "vision.hidden_size", "hidden_size")?;
    let vi = req(&mut v, "vision.intermediate_size", "intermediate_size")?;
    let depth = v.layers()?;
    let patch = req(&mut v, "vision.patch_size", "patch_size")?;
    let tp = req(&mut v, "vision.temporal_patch_size", "temporal_patch_size")?;
    let ch = v.or(
        ("vision.in_channels", "in_channels"),
        3,
        "ldg_siglip_default_3_channels",
    )?;
    let m = req(&mut v, "vision.spatial_merge_size", "spatial_merge_size")?;
    let out = req(&mut v, "vision.out_hidden_size", "out_hidden_size")?;
    let vm = mul(W, &[vh, m, m])?;
    let patch_embed = mul(W, &[ch, tp, patch, patch, vh])?;
    let attn = add(W, &[mul(W, &[4, vh, vh])?, mul(W, &[4, vh])?])?;
    // A merger: norm, Linear(v·m², v·m²) + bias, Linear(v·m², out) + bias.
    let merger_linears = add(W, &[mul(W, &[vm, vm])?, vm, mul(W, &[vm, out])?, out])?;
    let total = if qwen3 {
        let pos = req(
            &mut v,
            "vision.num_position_embeddings",
            "num_position_embeddings",
        )?;
        let deep = v.u64_list((
            "vision.deepstack_visual_indexes",
            "deepstack_visual_indexes",
        ))?;
        let block = add(W, &[mul(W, &[4, vh])?, attn, mul(W, &[2, vh, vi])?, vi, vh])?;
        let deep_mergers = mul(
            W,
            &[
                deep.len() as u64,
                add(W, &[mul(W, &[2, vm])?, merger_linears])?,
            ],
        )?;
        add(
            W,
            &[
                patch_embed,
                vh,
                mul(W, &[pos, vh])?,
                mul(W, &[depth, block])?,
                mul(W, &[2, vh])?,
                merger_linears,
                deep_mergers,
            ],
        )?
    } else {
        let block = add(
            W,
            &[
                mul(W, &[2, vh])?,
                attn,
                mul(W, &[3, vh, vi])?,
                mul(W, &[2, vi])?,
                vh,
            ],
        )?;
        add(
            W,
            &[patch_embed, mul(W, &[depth, block])?, vh, merger_linears],
        )?
    };
    r.ledger.extend(v.ledger);
    r.derived("vision_parameters", total, "ldg_vision_tower_counted");
    Ok(total)
}

/// Pixtral and the Mistral 3 projector into a language model of width `text_h`.
pub(super) fn pixtral(
    r: &mut Reader,
    vc: &Map<String, Value>,
    class: Option<&'static ClassDefaults>,
    text_h: u64,
) -> Result<u64, CalcError> {
    let mut v = reader(vc, class);
    let (vh, vi, vl, patch) = tower(&mut v)?;
    let ch = channels(&mut v)?;
    r.ledger.extend(v.ledger);
    let m = r.req("spatial_merge_size", "why_size_vision")?;
    let bias = r.flag(
        "multimodal_projector_bias",
        false,
        "ldg_default_no_mlp_biases",
    )?;
    let layer = add(
        W,
        &[
            mul(W, &[2, vh])?,
            mul(W, &[4, vh, vh])?,
            mul(W, &[3, vh, vi])?,
        ],
    )?;
    let projector = add(
        W,
        &[
            vh,
            mul(W, &[vh, m, m, vh])?,
            mul(W, &[vh, text_h])?,
            mul(W, &[text_h, text_h])?,
            if bias { 2 * text_h } else { 0 },
        ],
    )?;
    let total = add(
        W,
        &[
            mul(W, &[ch, patch, patch, vh])?,
            vh,
            mul(W, &[vl, layer])?,
            projector,
        ],
    )?;
    r.derived("vision_parameters", total, "ldg_vision_tower_counted");
    Ok(total)
}

/// The Llama 4 vision tower, its pixel-shuffle MLP and the projector into width `text_h`.
pub(super) fn llama4(
    r: &mut Reader,
    vc: &Map<String, Value>,
    class: Option<&'static ClassDefaults>,
    text_h: u64,
) -> Result<u64, CalcError> {
    let mut v = reader(vc, class);
    let (vh, vi, vl, patch) = tower(&mut v)?;
    let image = req(&mut v, "vision.image_size", "image_size")?;
    let ch = channels(&mut v)?;
    let p_in = req(&mut v, "vision.projector_input_dim", "projector_input_dim")?;
    let p_out = req(
        &mut v,
        "vision.projector_output_dim",
        "projector_output_dim",
    )?;
    let out = req(&mut v, "vision.vision_output_dim", "vision_output_dim")?;
    r.ledger.extend(v.ledger);
    let side = image / patch;
    let layer = add(
        W,
        &[
            mul(W, &[4, vh])?,
            mul(W, &[4, vh, vh])?,
            mul(W, &[4, vh])?,
            mul(W, &[2, vh, vi])?,
            vi,
            vh,
        ],
    )?;
    let total = add(
        W,
        &[
            mul(W, &[ch, patch, patch, vh])?,
            vh,
            mul(W, &[add(W, &[mul(W, &[side, side])?, 1])?, vh])?,
            mul(W, &[4, vh])?,
            mul(W, &[vl, layer])?,
            mul(W, &[vi, p_in])?,
            mul(W, &[p_out, p_out])?,
            mul(W, &[out, text_h])?,
        ],
    )?;
    r.derived("vision_parameters", total, "ldg_vision_tower_counted");
    Ok(total)
}

/// The aspect ratios of up to `tiles` tiles (`w·h ≤ tiles`), as MllamaVisionConfig derives
/// `supported_aspect_ratios` when the config has none.
fn aspect_ratios(tiles: u64) -> u64 {
    (1..=tiles).map(|w| tiles / w).sum()
}

/// The Llama 3.2 Vision (mllama) tower: patch conv `C·p²·v`, class embedding `v`, gated
/// positions `N·v + 1` (N = (image/p)² + 1) with tile embeddings `(R + 1)·T·N·v`, pre- and
/// post-tile aspect-ratio embeddings `2·((R + 1)·T·v + 1)`, pre/post LayerNorms `4v`, local
/// layers (q/k/v/o `4v²`, MLP `2·v·I + I + v`, two LayerNorms `4v`), global layers (the same
/// plus two gates), and the projector `vision_output_dim·h + h`.
pub(super) fn mllama(
    r: &mut Reader,
    vc: &Map<String, Value>,
    class: Option<&'static ClassDefaults>,
    text_h: u64,
) -> Result<u64, CalcError> {
    let mut v = reader(vc, class);
    let vh = req(&mut v, "vision.hidden_size", "hidden_size")?;
    let vi = req(&mut v, "vision.intermediate_size", "intermediate_size")?;
    let local = v.layers()?;
    let global = req(&mut v, "vision.num_global_layers", "num_global_layers")?;
    let patch = req(&mut v, "vision.patch_size", "patch_size")?;
    let image = req(&mut v, "vision.image_size", "image_size")?;
    let tiles = req(&mut v, "vision.max_num_tiles", "max_num_tiles")?;
    let ch = channels(&mut v)?;
    let out = req(&mut v, "vision.vision_output_dim", "vision_output_dim")?;
    let ratios = match vc.get("supported_aspect_ratios").and_then(Value::as_array) {
        Some(a) => a.len() as u64,
        None => aspect_ratios(tiles),
    };
    r.ledger.extend(v.ledger);
    let side = image / patch;
    let n = add(W, &[mul(W, &[side, side])?, 1])?;
    r.derived(
        "encoder_tokens_per_image",
        mul(W, &[tiles, n])?,
        "ldg_mllama_image_tokens",
    );
    let layer = add(
        W,
        &[
            mul(W, &[4, vh, vh])?,
            mul(W, &[2, vh, vi])?,
            vi,
            vh,
            mul(W, &[4, vh])?,
        ],
    )?;
    let total = add(
        W,
        &[
            mul(W, &[ch, patch, patch, vh])?,
            vh,
            mul(W, &[n, vh])?,
            1,
            mul(W, &[ratios + 1, tiles, n, vh])?,
            mul(W, &[2, add(W, &[mul(W, &[ratios + 1, tiles, vh])?, 1])?])?,
            mul(W, &[4, vh])?,
            mul(W, &[local, layer])?,
            mul(W, &[global, add(W, &[layer, 2])?])?,
            mul(W, &[out, text_h])?,
            text_h,
        ],
    )?;
    r.derived("vision_parameters", total, "ldg_vision_tower_counted");
    Ok(total)
}
