//! Fetch a model's config from the Hugging Face Hub: a model id box and a button.
//!
//! The only request the app ever makes after its own files, and only when the button is
//! pressed: `GET https://huggingface.co/{id}/resolve/main/config.json`, then the model API
//! (`/api/models/{id}`, for the Hub's safetensors parameter count) and, when the API has no
//! count, `model.safetensors.index.json`. Each request is a CORS `fetch` with no credentials
//! (no cookie, no token) and `referrerPolicy: no-referrer` (the page's address, which holds
//! the whole scenario, is not sent); the browser adds its usual headers (the page's origin, its
//! user agent). The URLs and the reading of every answer are the core's (`core::model::hub`).
//!
//! Where the requests go, and why tests cannot move it in production:
//! - The base is [`HUB_ORIGIN`] unless the page has `<meta name="hf-endpoint" content="…">`
//!   **and** its value is a loopback address with a port (`http://127.0.0.1:PORT`; checked by
//!   `core::model::loopback_endpoint`). The shipped `index.html` has no such tag; the e2e test
//!   (`e2e/hub.test.mjs`) serves a copy of the built page with one, pointing at its stub, and a
//!   `connect-src` rewritten to allow that stub. No URL parameter or stored value can change
//!   the base.
//! - The shipped page's Content-Security-Policy has `connect-src 'self' https://huggingface.co`
//!   ('self' for the app's own wasm), so even a changed base could not be reached.
//! - A `data-timeout-ms` on that meta tag shortens the timeout for the test of a slow answer;
//!   it is read only together with a loopback endpoint.
//!
//! The box comes with the late module (`ui::late::LatePart` "hub"): the requests and
//! the reading of the Hub's answers are not needed for the first answer. Until it arrives the
//! shell shows [`HubFetchPlaceholder`] in its place; a fetched config goes to the shell's model
//! panel as `ui::late::EVT_HUB_CONFIG`.

use crate::core::base::{fill, Lang, Phrase};
use crate::core::model::{
    compare_hub_count, loopback_endpoint, read_api, read_config, read_index, Comparison, HubCount,
    HubError, HubFile, ModelId, HUB_ORIGIN, HUB_TIMEOUT_S,
};
use crate::ui::state::use_app;
use leptos::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;

/// Where to fetch from and how long to wait.
#[derive(Debug, Clone)]
struct Endpoint {
    base: String,
    timeout_ms: u32,
}

/// The base URL and timeout: the Hub's, or a loopback stub named by the page (see the module
/// docs).
fn endpoint() -> Endpoint {
    let default_ms = u32::try_from(HUB_TIMEOUT_S * 1000).unwrap_or(20_000);
    let meta = web_sys::window().and_then(|w| w.document()).and_then(|d| {
        d.query_selector("meta[name=\"hf-endpoint\"]")
            .ok()
            .flatten()
    });
    let stub = meta.as_ref().and_then(|m| {
        let base = loopback_endpoint(&m.get_attribute("content")?)?;
        let ms = m
            .get_attribute("data-timeout-ms")
            .and_then(|t| t.parse::<u32>().ok())
            .filter(|t| (100..=60_000).contains(t));
        Some(Endpoint {
            base,
            timeout_ms: ms.unwrap_or(default_ms),
        })
    });
    stub.unwrap_or(Endpoint {
        base: HUB_ORIGIN.to_string(),
        timeout_ms: default_ms,
    })
}

/// One GET: its status and body text, or the failure as a [`HubError`]. An `AbortController`
/// stops it after the timeout (the body's reading included).
async fn get(url: &str, timeout_ms: u32) -> Result<(u16, String), HubError> {
    let offline = || HubError::Offline {
        detail: String::new(),
    };
    let window = web_sys::window().ok_or_else(offline)?;
    let controller = web_sys::AbortController::new().map_err(|_| offline())?;
    let init = web_sys::RequestInit::new();
    init.set_method("GET");
    init.set_mode(web_sys::RequestMode::Cors);
    init.set_credentials(web_sys::RequestCredentials::Omit);
    init.set_referrer_policy(web_sys::ReferrerPolicy::NoReferrer);
    init.set_signal(Some(&controller.signal()));
    let signal = controller.signal();
    let _timer = gloo::timers::callback::Timeout::new(timeout_ms, move || controller.abort());
    let failed = |_| {
        if signal.aborted() {
            HubError::Timeout {
                seconds: u64::from(timeout_ms.div_ceil(1000)),
            }
        } else {
            offline()
        }
    };
    let res = JsFuture::from(window.fetch_with_str_and_init(url, &init))
        .await
        .map_err(failed)?;
    let res: web_sys::Response = res.dyn_into().map_err(|_| offline())?;
    let status = res.status();
    let text = JsFuture::from(res.text().map_err(|_| offline())?)
        .await
        .map_err(failed)?;
    Ok((status, text.as_string().unwrap_or_default()))
}

/// A fetched model: the config text and the two counts.
#[derive(Debug, Clone, PartialEq)]
struct Fetched {
    id: String,
    config: String,
    ours: u64,
    hub: Option<(Comparison, HubCount)>,
    /// Why there is no Hub count.
    note: Option<Phrase>,
}

/// Fetches config.json, then the count (the API, else the index); the config's failure is
/// the result's, a failure to count only a note.
async fn fetch_model(id: ModelId) -> Result<Fetched, HubError> {
    let ep = endpoint();
    let one = |f: HubFile| {
        let url = f.url(&ep.base, &id);
        async move { get(&url, ep.timeout_ms).await }
    };
    let (status, config) = one(HubFile::Config).await?;
    let model = read_config(&id, status, &config)?;
    let mut count = match one(HubFile::Api).await {
        Ok((s, b)) => read_api(&id, s, &b),
        Err(e) => Err(e),
    };
    if !matches!(count, Ok(Some(_))) {
        let index = match one(HubFile::Index).await {
            Ok((s, b)) => read_index(&id, s, &b, model.weights.base),
            Err(e) => Err(e),
        };
        count = match index {
            Ok(Some(c)) => Ok(Some(c)),
            Ok(None) => count,
            Err(e) => count.and(Err(e)),
        };
    }
    let (hub, note) = match count {
        Ok(Some(c)) => (Some((compare_hub_count(&model, &c), c)), None),
        Ok(None) => (None, Some(Phrase::tr("phr_hub_no_count"))),
        Err(e) => (None, Some(e.phrase())),
    };
    Ok(Fetched {
        id: id.to_string(),
        config,
        ours: model.params.total,
        hub,
        note,
    })
}

/// The Hub fetch's place until the late module brings it: the same label, box, button and
/// privacy line, disabled (the box says it is loading), so nothing moves when it arrives.
#[component]
pub fn HubFetchPlaceholder() -> impl IntoView {
    let state = use_app();
    view! {
        <div class="field hub-fetch">
            <label>{move || state.tr("model_hub_label")}</label>
            <div class="row">
                <input
                    type="text"
                    disabled=true
                    aria-label=move || state.tr("model_hub_label")
                    placeholder=move || state.tr("late_part_loading")
                />
                <button type="button" class="btn btn-small" disabled=true>
                    {move || state.tr("model_hub_fetch")}
                </button>
            </div>
            <p class="muted hub-privacy">{move || state.tr("model_hub_privacy")}</p>
        </div>
    }
}

/// The model id box, the button, the line that says what is sent, and the last result: the
/// calculator's count beside the Hub's with the difference explained, or the sentence for a
/// failure (the last good result stays on screen beneath it).
#[component]
pub fn HubFetch(
    /// Receives a fetched config.json (validated and applied like a paste).
    on_config: Callback<String>,
) -> impl IntoView {
    let state = use_app();
    let id_text = RwSignal::new(String::new());
    let busy = RwSignal::new(false);
    let error: RwSignal<Option<HubError>> = RwSignal::new(None);
    let result: RwSignal<Option<Fetched>> = RwSignal::new(None);
    let start = move || {
        if busy.get_untracked() {
            return;
        }
        let id = match ModelId::parse(&id_text.get_untracked()) {
            Ok(id) => id,
            Err(e) => return error.set(Some(e)),
        };
        busy.set(true);
        leptos::task::spawn_local(async move {
            let r = fetch_model(id).await;
            let _ = busy.try_set(false);
            match r {
                Ok(f) => {
                    on_config.run(f.config.clone());
                    let _ = error.try_set(None);
                    let _ = result.try_set(Some(f));
                }
                Err(e) => {
                    let _ = error.try_set(Some(e));
                }
            }
        });
    };
    view! {
        <div class="field hub-fetch" data-testid="hub-fetch-panel">
            <label for="hub-id">{move || state.tr("model_hub_label")}</label>
            <div class="row">
                <input
                    id="hub-id"
                    data-testid="hub-id"
                    type="text"
                    spellcheck="false"
                    autocomplete="off"
                    placeholder=move || state.tr("model_hub_placeholder")
                    prop:value=move || id_text.get()
                    on:input=move |ev| id_text.set(event_target_value(&ev))
                    on:keydown=move |ev: leptos::ev::KeyboardEvent| {
                        if ev.key() == "Enter" {
                            start();
                        }
                    }
                />
                <button
                    type="button"
                    class="btn btn-small"
                    data-testid="hub-fetch"
                    disabled=move || busy.get()
                    on:click=move |_| start()
                >
                    {move || {
                        state.tr(if busy.get() { "model_hub_fetching" } else { "model_hub_fetch" })
                    }}
                </button>
            </div>
            <p class="muted hub-privacy" data-testid="hub-privacy">
                {move || state.tr("model_hub_privacy")}
            </p>
            <HubFailure error=error />
            <HubResult result=result />
        </div>
    }
}

/// The failure's sentence, with a note that the last good result is kept.
#[component]
fn HubFailure(
    /// The failure, if the last press failed.
    error: RwSignal<Option<HubError>>,
) -> impl IntoView {
    let state = use_app();
    move || {
        let lang = state.lang.get();
        error.with(|e| {
            e.as_ref().map(|e| {
                view! {
                    <div class="model-error" role="alert">
                        <p data-testid="hub-error" data-kind=e.kind()>{e.message(lang)}</p>
                        <p class="muted">{state.tr("model_hub_kept")}</p>
                    </div>
                }
            })
        })
    }
}

/// Both counts side by side, and why they differ.
#[component]
fn HubResult(
    /// The last good fetch.
    result: RwSignal<Option<Fetched>>,
) -> impl IntoView {
    let state = use_app();
    move || {
        let lang = state.lang.get();
        result.with(|r| r.as_ref().map(|f| result_view(state, lang, f)))
    }
}

fn result_view(state: crate::ui::state::AppState, lang: Lang, f: &Fetched) -> impl IntoView {
    let nf = lang.number_symbols();
    let hub_total = f.hub.as_ref().map(|(c, _)| c.hub);
    let hub_text =
        hub_total.map_or_else(|| state.tr("model_hub_none").to_string(), |n| nf.group(n));
    let dtypes = f.hub.as_ref().map_or_else(String::new, |(_, c)| {
        c.by_dtype
            .iter()
            .map(|(k, n)| format!("{k} {}", nf.group(*n)))
            .collect::<Vec<_>>()
            .join(", ")
    });
    let mut lines: Vec<String> = f
        .hub
        .as_ref()
        .map(|(c, _)| c.explanation.iter().map(|p| p.text(lang)).collect())
        .unwrap_or_default();
    lines.extend(f.note.iter().map(|p| p.text(lang)));
    let loaded = fill(state.tr("model_hub_loaded"), &[("id", &f.id)]);
    let dtypes = (!dtypes.is_empty()).then(|| format!(" ({dtypes})"));
    view! {
        <div class="hub-result" data-testid="hub-result">
            <p class="muted">{loaded}</p>
            <dl class="model-facts hub-counts">
                <div>
                    <dt>{state.tr("model_hub_ours")}</dt>
                    <dd data-testid="hub-ours" data-value=f.ours.to_string()>{nf.group(f.ours)}</dd>
                </div>
                <div>
                    <dt>{state.tr("model_hub_theirs")}</dt>
                    <dd
                        data-testid="hub-count"
                        data-value=hub_total.map(|n| n.to_string()).unwrap_or_default()
                    >
                        {hub_text}
                        <span class="muted">{dtypes}</span>
                    </dd>
                </div>
            </dl>
            <ul class="hub-explanation" data-testid="hub-explanation">
                {lines.into_iter().map(|l| view! { <li>{l}</li> }).collect_view()}
            </ul>
        </div>
    }
}
