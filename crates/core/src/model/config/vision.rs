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
//!
//! MiniCPM-V's SigLIP towers and resampler are counted from these blocks in `minicpmv.rs`.

use super::defaults::{self, class_for, ClassDefaults};
use super::model_type::type_of;
use super::reader::{layer_count, Reader};
use crate::base::checked::{add, mul};
use crate::base::error::CalcError;
use serde_json::{Map, Value};

pub(super) const W: &str = "ovf_vision_params";

/// Reads a tower's sizes (`read`, through a reader over the vision config and its class),
/// then moves what it read into the model's ledger, in reading order.
pub(super) fn read_tower<T>(
    r: &mut Reader,
    vc: &Map<String, Value>,
    class: Option<&'static ClassDefaults>,
    read: impl FnOnce(&mut Reader) -> Result<T, CalcError>,
) -> Result<T, CalcError> {
    let mut v = Reader::new(vc, vc).with_classes(class, None);
    let sizes = read(&mut v)?;
    r.ledger.extend(v.ledger);
    Ok(sizes)
}

/// Records a tower's count (`vision_parameters`, explained by `how`) and returns it.
fn counted(r: &mut Reader, total: u64, how: &'static str) -> u64 {
    r.derived("vision_parameters", total, how);
    total
}

pub(super) fn req(v: &mut Reader, field: &str, key: &'static str) -> Result<u64, CalcError> {
    v.req((field, key), "why_size_vision")
}

/// The tower's layer count (`num_hidden_layers` or its spelling `depth`), recorded in the
/// ledger as `vision.num_hidden_layers`, apart from the language model's.
fn vision_layers(v: &mut Reader) -> Result<u64, CalcError> {
    let field = "vision.num_hidden_layers";
    layer_count(field, req(v, field, "num_hidden_layers")?)
}

/// The four sizes every ViT tower states, read in this order (the ledger's order): width,
/// MLP width, layers, patch size.
pub(super) fn tower(v: &mut Reader) -> Result<(u64, u64, u64, u64), CalcError> {
    let vh = req(v, "vision.hidden_size", "hidden_size")?;
    let vi = req(v, "vision.intermediate_size", "intermediate_size")?;
    let vl = vision_layers(v)?;
    let patch = req(v, "vision.patch_size", "patch_size")?;
    Ok((vh, vi, vl, patch))
}

/// The image channels (3 unless the config says otherwise).
pub(super) fn channels(v: &mut Reader) -> Result<u64, CalcError> {
    v.or(
        ("vision.num_channels", "num_channels"),
        3,
        "ldg_siglip_default_3_channels",
    )
}

/// The make of a tower's encoder layer.
pub(super) struct Block {
    /// LayerNorms (weight and bias) rather than RMSNorms (weight).
    layer_norm: bool,
    /// Biases on q, k, v and o.
    attn_bias: bool,
    /// A gated MLP (gate, up, down) rather than a plain one (fc1, fc2).
    gated: bool,
    /// Biases on the MLP's linears.
    mlp_bias: bool,
}

/// The layer of SigLIP, Llama 4 and Qwen3-VL: LayerNorms, q/k/v/o and MLP with biases.
pub(super) const VIT: Block = Block {
    layer_norm: true,
    attn_bias: true,
    gated: false,
    mlp_bias: true,
};

/// One encoder layer of width `vh` and MLP width `vi`: two norms (`4v` or `2v`), q/k/v/o `4v²`
/// (biases `4v`), an MLP `2·v·I` or gated `3·v·I` (biases `I + v` or `2I + v`).
pub(super) fn layer(vh: u64, vi: u64, b: &Block) -> Result<u64, CalcError> {
    let mats = if b.gated { 3 } else { 2 };
    add(
        W,
        &[
            mul(W, &[if b.layer_norm { 4 } else { 2 }, vh])?,
            mul(W, &[4, vh, vh])?,
            if b.attn_bias { mul(W, &[4, vh])? } else { 0 },
            mul(W, &[mats, vh, vi])?,
            if b.mlp_bias {
                add(W, &[mul(W, &[mats - 1, vi])?, vh])?
            } else {
                0
            },
        ],
    )
}

/// SigLIP (Gemma 3) and the Gemma 3 projector into a language model of width `text_h`.
pub(super) fn siglip(
    r: &mut Reader,
    vc: &Map<String, Value>,
    text_h: u64,
) -> Result<u64, CalcError> {
    let ((vh, vi, vl, patch), image, ch) =
        read_tower(r, vc, class_for("siglip_vision_model"), |v| {
            let t = tower(v)?;
            Ok((t, req(v, "vision.image_size", "image_size")?, channels(v)?))
        })?;
    let side = image / patch;
    let total = add(
        W,
        &[
            mul(W, &[vl, layer(vh, vi, &VIT)?])?,
            mul(W, &[ch, patch, patch, vh])?,
            vh,
            mul(W, &[side, side, vh])?,
            mul(W, &[2, vh])?,
            mul(W, &[vh, text_h])?,
            vh,
        ],
    )?;
    Ok(counted(
        r,
        total,
        "ldg_siglip_vision_tower_gemma_3_projector_counte",
    ))
}

/// Which Qwen vision tower: Qwen2.5-VL's (RMSNorm blocks with a gated MLP, no learned
/// positions), Qwen3-VL's (learned positions and `deepstack_visual_indexes` mergers) or
/// Qwen3.5's (Qwen3-VL's without the deep-stack mergers: transformers 5.24.0's
/// `Qwen3_5VisionModel` deletes them).
#[derive(Clone, Copy, PartialEq)]
pub(super) enum QwenVlLayout {
    Qwen25,
    Qwen3,
    Qwen35,
}

/// The Qwen2.5-VL / Qwen3-VL sizes besides the four of [`tower`].
struct QwenVl {
    tp: u64,
    ch: u64,
    m: u64,
    out: u64,
    /// Qwen3-VL's learned positions and deep-stack merger count.
    qwen3: Option<(u64, u64)>,
}

fn read_qwen_vl(v: &mut Reader, layout: QwenVlLayout) -> Result<QwenVl, CalcError> {
    let tp = req(v, "vision.temporal_patch_size", "temporal_patch_size")?;
    let ch = v.or(
        ("vision.in_channels", "in_channels"),
        3,
        "ldg_siglip_default_3_channels",
    )?;
    let m = req(v, "vision.spatial_merge_size", "spatial_merge_size")?;
    let out = req(v, "vision.out_hidden_size", "out_hidden_size")?;
    let qwen3 = if layout == QwenVlLayout::Qwen25 {
        None
    } else {
        let pos = req(
            v,
            "vision.num_position_embeddings",
            "num_position_embeddings",
        )?;
        let deep = if layout == QwenVlLayout::Qwen3 {
            v.u64_list((
                "vision.deepstack_visual_indexes",
                "deepstack_visual_indexes",
            ))?
            .len() as u64
        } else {
            0
        };
        Some((pos, deep))
    };
    Ok(QwenVl {
        tp,
        ch,
        m,
        out,
        qwen3,
    })
}

/// The Qwen2.5-VL / Qwen3-VL / Qwen3.5 vision tower.
pub(super) fn qwen_vl(
    r: &mut Reader,
    vc: &Map<String, Value>,
    class: Option<&'static ClassDefaults>,
    layout: QwenVlLayout,
) -> Result<u64, CalcError> {
    let ((vh, vi, depth, patch), q) = read_tower(r, vc, class, |v| {
        let t = tower(v)?;
        Ok((t, read_qwen_vl(v, layout)?))
    })?;
    let vm = mul(W, &[vh, q.m, q.m])?;
    let patch_embed = mul(W, &[q.ch, q.tp, patch, patch, vh])?;
    // A merger: norm, Linear(v·m², v·m²) + bias, Linear(v·m², out) + bias.
    let merger_linears = add(W, &[mul(W, &[vm, vm])?, vm, mul(W, &[vm, q.out])?, q.out])?;
    let total = match q.qwen3 {
        Some((pos, deep)) => {
            let deep_mergers = mul(W, &[deep, add(W, &[mul(W, &[2, vm])?, merger_linears])?])?;
            add(
                W,
                &[
                    patch_embed,
                    vh,
                    mul(W, &[pos, vh])?,
                    mul(W, &[depth, layer(vh, vi, &VIT)?])?,
                    mul(W, &[2, vh])?,
                    merger_linears,
                    deep_mergers,
                ],
            )?
        }
        None => {
            let block = Block {
                layer_norm: false,
                attn_bias: true,
                gated: true,
                mlp_bias: true,
            };
            add(
                W,
                &[
                    patch_embed,
                    mul(W, &[depth, layer(vh, vi, &block)?])?,
                    vh,
                    merger_linears,
                ],
            )?
        }
    };
    Ok(counted(r, total, "ldg_vision_tower_counted"))
}

/// Pixtral and the Mistral 3 projector into a language model of width `text_h`.
pub(super) fn pixtral(
    r: &mut Reader,
    vc: &Map<String, Value>,
    class: Option<&'static ClassDefaults>,
    text_h: u64,
) -> Result<u64, CalcError> {
    let ((vh, vi, vl, patch), ch) = read_tower(r, vc, class, |v| Ok((tower(v)?, channels(v)?)))?;
    let m = r.req("spatial_merge_size", "why_size_vision")?;
    let bias = r.flag(
        "multimodal_projector_bias",
        false,
        "ldg_default_no_mlp_biases",
    )?;
    let block = Block {
        layer_norm: false,
        attn_bias: false,
        gated: true,
        mlp_bias: false,
    };
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
            mul(W, &[vl, layer(vh, vi, &block)?])?,
            projector,
        ],
    )?;
    Ok(counted(r, total, "ldg_vision_tower_counted"))
}

/// The Llama 4 vision tower, its pixel-shuffle MLP and the projector into width `text_h`.
pub(super) fn llama4(
    r: &mut Reader,
    vc: &Map<String, Value>,
    class: Option<&'static ClassDefaults>,
    text_h: u64,
) -> Result<u64, CalcError> {
    let ((vh, vi, vl, patch), image, ch, (p_in, p_out, out)) = read_tower(r, vc, class, |v| {
        let t = tower(v)?;
        let image = req(v, "vision.image_size", "image_size")?;
        let ch = channels(v)?;
        let p_in = req(v, "vision.projector_input_dim", "projector_input_dim")?;
        let p_out = req(v, "vision.projector_output_dim", "projector_output_dim")?;
        let out = req(v, "vision.vision_output_dim", "vision_output_dim")?;
        Ok((t, image, ch, (p_in, p_out, out)))
    })?;
    let side = image / patch;
    let total = add(
        W,
        &[
            mul(W, &[ch, patch, patch, vh])?,
            vh,
            mul(W, &[add(W, &[mul(W, &[side, side])?, 1])?, vh])?,
            mul(W, &[4, vh])?,
            mul(W, &[vl, layer(vh, vi, &VIT)?])?,
            mul(W, &[vi, p_in])?,
            mul(W, &[p_out, p_out])?,
            mul(W, &[out, text_h])?,
        ],
    )?;
    Ok(counted(r, total, "ldg_vision_tower_counted"))
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
    let (vh, vi, local, global, patch, image, tiles, ch, out) = read_tower(r, vc, class, |v| {
        let vh = req(v, "vision.hidden_size", "hidden_size")?;
        let vi = req(v, "vision.intermediate_size", "intermediate_size")?;
        let local = vision_layers(v)?;
        let global = req(v, "vision.num_global_layers", "num_global_layers")?;
        let patch = req(v, "vision.patch_size", "patch_size")?;
        let image = req(v, "vision.image_size", "image_size")?;
        let tiles = req(v, "vision.max_num_tiles", "max_num_tiles")?;
        let ch = channels(v)?;
        let out = req(v, "vision.vision_output_dim", "vision_output_dim")?;
        Ok((vh, vi, local, global, patch, image, tiles, ch, out))
    })?;
    let ratios = match vc.get("supported_aspect_ratios").and_then(Value::as_array) {
        Some(a) => a.len() as u64,
        None => aspect_ratios(tiles),
    };
    let side = image / patch;
    let n = add(W, &[mul(W, &[side, side])?, 1])?;
    r.derived(
        "encoder_tokens_per_image",
        mul(W, &[tiles, n])?,
        "ldg_mllama_image_tokens",
    );
    let block = layer(
        vh,
        vi,
        &Block {
            attn_bias: false,
            ..VIT
        },
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
            mul(W, &[local, block])?,
            mul(W, &[global, add(W, &[block, 2])?])?,
            mul(W, &[out, text_h])?,
            text_h,
        ],
    )?;
    Ok(counted(r, total, "ldg_vision_tower_counted"))
}

/// Counts the vision tower of a multimodal config (with its projector into the language
/// model of width `text_h`), `None` for a tower this calculator does not know.
pub(super) fn vision_tower(
    r: &mut Reader,
    vc: &Map<String, Value>,
    root_type: &str,
    fam: &str,
    text_h: u64,
) -> Result<Option<u64>, CalcError> {
    let vt = type_of(vc);
    let class = defaults::nested(defaults::class_for(root_type), "vision_config")
        .or_else(|| defaults::class_for(&vt));
    Ok(match (root_type, fam, vt.as_str()) {
        (_, "gemma3", "siglip_vision_model" | "") => Some(siglip(r, vc, text_h)?),
        ("qwen2_5_vl", _, _) => Some(qwen_vl(r, vc, class, QwenVlLayout::Qwen25)?),
        ("qwen3_vl" | "qwen3_vl_moe", _, _) => Some(qwen_vl(r, vc, class, QwenVlLayout::Qwen3)?),
        ("qwen3_5" | "qwen3_5_moe", _, _) => Some(qwen_vl(r, vc, class, QwenVlLayout::Qwen35)?),
        ("mistral3", _, "pixtral" | "") => Some(pixtral(r, vc, class, text_h)?),
        ("llama4", _, _) => Some(llama4(r, vc, class, text_h)?),
        ("mllama", _, _) => Some(mllama(r, vc, class, text_h)?),
        _ => None,
    })
}
