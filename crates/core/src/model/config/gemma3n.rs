//! Gemma 3n (`gemma3n`, `gemma3n_text`), counted as transformers' `modeling_gemma3n.py`
//! builds it and as the published checkpoints store it (transformers 5.24.0; the class
//! defaults of `Gemma3nTextConfig`, `Gemma3nAudioConfig` and `Gemma3nVisionConfig` are those of
//! `google/gemma-3n-E4B`).
//!
//! - Text model: embedding `V·h` (tied to the head); per-layer embeddings
//!   `V_pl · L · h_pl` with their projection `h · L · h_pl` and norm `h_pl`; AltUp's
//!   `2 · (A − 1) · h²` input and output projections; final norm `h`.
//! - Each layer: q/k/v/o with q/k norms `2·d` (the v norm has no weight); the checkpoints store
//!   k/v projections for the KV-sharing layers too; a gated MLP `3·h·I_ℓ` (one width per
//!   layer); four norms plus LAuReL's, the per-layer input's and AltUp's router norm (`7h`);
//!   AltUp `h + A² + A³ + h·A`; LAuReL `2·h·r`; the per-layer input gate and projection
//!   `2·h·h_pl`.
//! - Audio tower (a USM conformer): two sub-sampling convolutions `c_in·c·k_h·k_w` with a
//!   group-norm weight `c`, the input projection `c_last · f_last · a`; per conformer block two
//!   feed-forward modules `8a² + 2a`, attention (norms `2a`, relative position projection and
//!   q/k/v/post `5a²`, per-dimension scale `a / heads`), the light convolution
//!   (`3a² + k·a + 2a`) and the block norm `a`.
//! - Vision tower: the timm `mobilenetv5_300m_enc` encoder, whose shapes the config does not
//!   spell out: 294,284,096 parameters (keras-hub `mobilenetv5_300m_enc_gemma3n`).
//! - Each tower's embedder into the language model: `128 · m + 2m + m·h`.
//!
//! The last `num_kv_shared_layers` layers reuse the KV cache of the last earlier layer of their
//! attention type: [`super::kit::Parts::kv_shared`].

use super::common::{not_one_per_layer, read_core, read_max_pos, read_tie};
use super::defaults::{class_for, nested, ClassDefaults};
use super::kit::{
    add_attention, add_dense_ffn, add_embeddings, windowed_attention, Acc, Comp, Parts,
};
use super::reader::Reader;
use super::windows::read_windows;
use crate::base::checked::{add, mul};
use crate::base::error::{CalcError, Phrase};
use crate::model::desc::Layer;
use serde_json::{Map, Value};

const W: &str = "ovf_param_count";

/// Parameters of the timm `mobilenetv5_300m_enc` encoder (the Gemma 3n vision tower):
/// keras-hub `keras_hub/src/models/mobilenetv5/mobilenetv5_presets.py`, preset
/// `mobilenetv5_300m_enc_gemma3n` (keras-team/keras-hub@b93373ad).
pub const MOBILENET_V5_300M: u64 = 294_284_096;

/// The per-layer MLP widths: `intermediate_size` as one number for every layer or a list with
/// one entry per layer.
fn intermediate(r: &mut Reader, n: u64) -> Result<Vec<u64>, CalcError> {
    let n = usize::try_from(n).map_err(|_| CalcError::Overflow {
        what: Phrase::tr("ovf_layer_count"),
    })?;
    if let Some((_, Value::Array(_))) = r.find("intermediate_size") {
        let v = r.u64_list("intermediate_size")?;
        if v.len() != n || v.contains(&0) {
            return Err(not_one_per_layer("intermediate_size", v.len(), n as u64));
        }
        return Ok(v);
    }
    let i = r.req("intermediate_size", "why_size_mlp")?;
    Ok(vec![i; n])
}

/// The sizes of the Gemma 3n additions: per-layer input width and vocabulary, AltUp inputs,
/// LAuReL rank, KV-sharing layers.
struct Extras {
    per_layer: u64,
    per_layer_vocab: u64,
    altup: u64,
    laurel: u64,
    shared: u64,
}

fn read_extras(r: &mut Reader, n: u64) -> Result<Extras, CalcError> {
    let why = "why_size_gemma3n";
    let e = Extras {
        per_layer: r.req("hidden_size_per_layer_input", why)?,
        per_layer_vocab: r.req("vocab_size_per_layer_input", why)?,
        altup: r.req("altup_num_inputs", why)?,
        laurel: r.req("laurel_rank", why)?,
        shared: r.or0("num_kv_shared_layers", 0, "ldg_gemma3n_no_kv_sharing")?,
    };
    if e.shared >= n {
        return Err(CalcError::range_error(
            Phrase::verbatim("num_kv_shared_layers"),
            e.shared,
            Phrase::tr("rng_below").val("n", n),
        ));
    }
    Ok(e)
}

/// One decoder layer beyond its attention projections and MLP: q/k norms, seven norms, AltUp,
/// LAuReL and the per-layer input gate and projection.
fn layer_extras(acc: &mut Acc, h: u64, hd: u64, e: &Extras) -> Result<(), CalcError> {
    acc.add(Comp::Attn, mul(W, &[2, hd])?)?;
    acc.norms(7, h)?;
    let a = e.altup;
    acc.add(
        Comp::Other,
        add(
            W,
            &[h, mul(W, &[a, a])?, mul(W, &[a, a, a])?, mul(W, &[h, a])?],
        )?,
    )?;
    acc.lin(Comp::Other, mul(W, &[2, h, e.laurel])?)?;
    acc.lin(Comp::Other, mul(W, &[2, h, e.per_layer])?)
}

/// The Gemma 3n language model.
pub(super) fn build(r: &mut Reader) -> Result<Parts, CalcError> {
    let c = read_core(r, "gemma3n")?;
    let (h, n, hd) = (c.h, c.n_layers, c.hd);
    let tie = read_tie(r, true, "gemma3n")?;
    let widths = intermediate(r, n)?;
    let e = read_extras(r, n)?;
    let windows = read_windows(r, "gemma3n", n)?;

    let mut acc = Acc::default();
    let mut layers = Vec::with_capacity(windows.len());
    for (window, i) in windows.iter().zip(&widths) {
        add_attention(&mut acc, h, c.heads, c.kv, hd, hd, false, false)?;
        layer_extras(&mut acc, h, hd, &e)?;
        let ffn = add_dense_ffn(&mut acc, h, *i, true, false)?;
        layers.push(Layer {
            mixer: windowed_attention(c.heads, c.kv, hd, *window),
            ffn,
        });
    }
    let per_layer_all = mul(W, &[n, e.per_layer])?;
    acc.add(Comp::Emb, mul(W, &[e.per_layer_vocab, per_layer_all])?)?;
    acc.add(Comp::Other, mul(W, &[h, per_layer_all])?)?;
    acc.add(Comp::Norms, e.per_layer)?;
    acc.add(Comp::Other, mul(W, &[2, e.altup.saturating_sub(1), h, h])?)?;
    acc.norms(1, h)?;
    add_embeddings(r, &mut acc, c.vocab, h, tie)?;
    r.derived(
        "per_layer_embeddings",
        mul(W, &[e.per_layer_vocab, per_layer_all])?,
        "ldg_gemma3n_per_layer_embeddings",
    );
    finish_kv_shared(
        r,
        layers,
        acc,
        (h, c.vocab, tie),
        (n, e.shared),
        "ldg_gemma3n_kv_shared",
    )
}

/// The text model's parts when its last `shared` of `n` layers reuse an earlier layer's KV
/// (Gemma 3n, Gemma 4): the ledger line `ledger` and a warning name them, and the parts list
/// them so the KV cache leaves them out.
pub(super) fn finish_kv_shared(
    r: &mut Reader,
    layers: Vec<Layer>,
    acc: Acc,
    (h, vocab, tie): (u64, u64, bool),
    (n, shared): (u64, u64),
    ledger: &'static str,
) -> Result<Parts, CalcError> {
    let first_shared = n - shared;
    let kv_shared: Vec<usize> = (first_shared..n)
        .filter_map(|i| usize::try_from(i).ok())
        .collect();
    if shared > 0 {
        r.derived("kv_shared_layers", shared, ledger);
        r.warnings.push(
            Phrase::tr("wrn_gemma3n_kv_shared")
                .val("n", shared)
                .val("layers", n)
                .val("first", first_shared)
                .val("last", n - 1),
        );
    }
    let max_pos = read_max_pos(r)?;
    let mut parts = Parts::new(layers, acc, h, vocab, tie, max_pos);
    parts.kv_shared = kv_shared;
    Ok(parts)
}

/// A reader over a tower's part of the config (an empty part reads the class defaults, as
/// transformers builds a tower the config leaves out).
pub(super) fn part_reader<'a>(
    part: &'a Map<String, Value>,
    class: Option<&'static ClassDefaults>,
) -> Reader<'a> {
    Reader::new(part, part).with_classes(class, None)
}

/// A list of whole numbers (nested lists flattened: `[[3, 3], [3, 3]]`), from the config or
/// the class default; `None` when neither gives one.
fn list(v: &mut Reader, key: &'static str) -> Result<Option<Vec<u64>>, CalcError> {
    let Some((k, val, class)) = v.lookup(key) else {
        return Ok(None);
    };
    let mut out = Vec::new();
    let mut stack: Vec<&Value> = vec![val];
    while let Some(x) = stack.pop() {
        match x {
            Value::Array(a) => stack.extend(a.iter().rev()),
            other => out.push(Reader::to_u64(k, other, 1)?),
        }
    }
    let text = format!("{out:?}");
    v.note_found(&format!("audio.{key}"), text, k, class);
    Ok(Some(out))
}

/// `n` positive numbers of `key`: the list the config (or its class) gives, or an error.
pub(super) fn need_list(
    v: &mut Reader,
    key: &'static str,
    n: usize,
) -> Result<Vec<u64>, CalcError> {
    match list(v, key)? {
        Some(l) if l.len() == n => Ok(l),
        Some(l) => Err(CalcError::BadValue {
            key: key.into(),
            found: Phrase::tr("fnd_list_of").val("n", l.len()),
            expected: Phrase::tr("exp_list_whole_n").val("n", n),
        }),
        None => Err(CalcError::MissingKey {
            key: key.into(),
            why: Phrase::tr("why_size_audio"),
        }),
    }
}

/// The USM conformer audio encoder and its embedder into a language model of width `text_h`.
fn audio(v: &mut Reader, text_h: u64) -> Result<u64, CalcError> {
    let why = "why_size_audio";
    let a = v.req(("audio.hidden_size", "hidden_size"), why)?;
    let blocks = v.req(("audio.layers", "conf_num_hidden_layers"), why)?;
    let heads = v.req(("audio.heads", "conf_num_attention_heads"), why)?;
    let kernel = v.req(("audio.conv_kernel", "conf_conv_kernel_size"), why)?;
    let mut f = v.req(("audio.input_features", "input_feat_size"), why)?;
    let vocab = v.req(("audio.vocab_size", "vocab_size"), why)?;
    let ch = need_list(v, "sscp_conv_channel_size", 2)?;
    let ks = need_list(v, "sscp_conv_kernel_size", 4)?;
    let st = need_list(v, "sscp_conv_stride_size", 4)?;
    let mut total = 0u64;
    let mut c_in = 1;
    for (i, c) in ch.iter().enumerate() {
        let (kh, kw, sw) = (ks[2 * i], ks[2 * i + 1], st[2 * i + 1]);
        total = add(W, &[total, mul(W, &[c_in, *c, kh, kw])?, *c])?;
        // Frequency padded by one on each side, then the convolution's output width.
        f = (f + 2).checked_sub(kw).map_or(0, |x| x / sw + 1);
        c_in = *c;
    }
    total = add(W, &[total, mul(W, &[c_in, f, a])?])?;
    let feed_forward = add(W, &[mul(W, &[8, a, a])?, mul(W, &[2, a])?])?;
    let attention = add(W, &[mul(W, &[5, a, a])?, mul(W, &[2, a])?, a / heads])?;
    let light_conv = add(
        W,
        &[mul(W, &[3, a, a])?, mul(W, &[kernel, a])?, mul(W, &[2, a])?],
    )?;
    let block = add(W, &[mul(W, &[2, feed_forward])?, attention, light_conv, a])?;
    total = add(W, &[total, mul(W, &[blocks, block])?])?;
    total = add(W, &[total, embedder(vocab, a, text_h)?])?;
    v.derived("audio_parameters", total, "ldg_gemma3n_audio_tower");
    Ok(total)
}

/// A Gemma 3n multimodal embedder: its own `vocab · m` table, two norms `2m`, the projection
/// `m · h` (the post-projection norm has no weight).
fn embedder(vocab: u64, m: u64, h: u64) -> Result<u64, CalcError> {
    add(
        W,
        &[mul(W, &[vocab, m])?, mul(W, &[2, m])?, mul(W, &[m, h])?],
    )
}

/// The MobileNet-V5 vision tower and its embedder, `None` for an encoder other than
/// `mobilenetv5_300m_enc` (its shapes are not in the config).
fn vision(v: &mut Reader, text_h: u64) -> Result<Option<u64>, CalcError> {
    let arch = match v.lookup("architecture") {
        Some((k, Value::String(s), class)) => {
            v.note_found("vision.architecture", s, k, class);
            s.clone()
        }
        _ => String::new(),
    };
    if arch != "mobilenetv5_300m_enc" {
        return Ok(None);
    }
    let m = v.req(("vision.hidden_size", "hidden_size"), "why_size_vision")?;
    let vocab = v.req(("vision.vocab_size", "vocab_size"), "why_size_vision")?;
    let total = add(W, &[MOBILENET_V5_300M, embedder(vocab, m, text_h)?])?;
    v.derived("vision_parameters", total, "ldg_gemma3n_vision_tower");
    Ok(Some(total))
}

/// Counts the towers of a `gemma3n` config (a part left out is built from its class defaults,
/// as transformers does) into `acc`.
pub(super) fn towers(
    r: &mut Reader,
    acc: &mut Acc,
    root: &Map<String, Value>,
    text_h: u64,
) -> Result<(), CalcError> {
    let empty = Map::new();
    let root_class = class_for("gemma3n");
    let part = |key: &str| root.get(key).and_then(Value::as_object).unwrap_or(&empty);
    let class_of = |key: &str, own: &str| nested(root_class, key).or_else(|| class_for(own));

    let mut v = part_reader(
        part("vision_config"),
        class_of("vision_config", "gemma3n_vision"),
    );
    let counted = vision(&mut v, text_h)?;
    r.ledger.append(&mut v.ledger);
    match counted {
        Some(n) => acc.tower(n)?,
        None => r.warnings.push(Phrase::tr("wrn_vision_not_counted")),
    }
    let mut a = part_reader(
        part("audio_config"),
        class_of("audio_config", "gemma3n_audio"),
    );
    let n = audio(&mut a, text_h)?;
    r.ledger.append(&mut a.ledger);
    acc.tower(n)
}
