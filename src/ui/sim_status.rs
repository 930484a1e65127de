//! The status line of a section computed in the serving simulator's Web Worker
//! (`ui::sim_client`): the worker's failure, the newest job's error, or "recomputing" while the
//! last result stays on screen. Used by the serving section and the planner's simulated sizing.

use crate::core::base::fill;
use crate::ui::sim_client::{SimSignals, Status};
use crate::ui::state::use_app;
use leptos::prelude::*;

/// One status line. Its test ids are `{prefix}-status`, `-failed`, `-running` and `-error`;
/// a job's error is shown as is, or inside the sentence `error_key` names (`{why}`).
#[component]
pub fn SimStatusLine<V>(
    sig: SimSignals<V>,
    prefix: &'static str,
    #[prop(optional)] error_key: Option<&'static str>,
) -> impl IntoView
where
    V: Send + Sync + 'static,
{
    let state = use_app();
    let id = move |what: &str| format!("{prefix}-{what}");
    view! {
        <div role="status" class=id("status") data-testid=id("status")>
            {move || match sig.status.get() {
                Status::Failed(why) => Some(view! {
                    <p class="calc-error" data-testid=id("failed")>
                        {fill(state.tr("sv_worker_failed"), &[("why", &why)])}
                    </p>
                }.into_any()),
                Status::Running if sig.view.with(Option::is_some) => Some(view! {
                    <p class="muted" data-testid=id("running")>{state.tr("sv_stale")}</p>
                }.into_any()),
                _ => None,
            }}
            {move || sig.job_error.get().map(|m| {
                let text = error_key.map_or_else(|| m.clone(), |k| fill(state.tr(k), &[("why", &m)]));
                view! { <p class="calc-error" data-testid=id("error")>{text}</p> }
            })}
        </div>
    }
}

/// What stands in a worker-backed section's place until its first result: "loading", the
/// section's own "running" sentence, or nothing once the worker failed (the status line says
/// why). `class` gives it the result's height.
#[component]
pub fn SimPlaceholder<V>(
    sig: SimSignals<V>,
    class: &'static str,
    testid: &'static str,
    running_key: &'static str,
) -> impl IntoView
where
    V: Send + Sync + 'static,
{
    let state = use_app();
    view! {
        <div class=class data-testid=testid>
            <p>{move || match sig.status.get() {
                Status::Failed(_) => String::new(),
                Status::Running => state.tr(running_key).to_string(),
                _ => state.tr("sv_loading").to_string(),
            }}</p>
        </div>
    }
}

/// Frames after a result block mounts before [`rebuild_once`] fires: after the frames that
/// draw the serving section's charts (two and three frames after a reply, `ui::serving_view`).
const REBUILD_ONCE_FRAMES: u32 = 4;

/// A trigger that a worker-backed section's result lists track (sentences, table rows, the
/// GPU choice, the math's derivation), fired once, in a task of its own after the block
/// mounts: the lists are rebuilt once with the same result. V8 compiles wasm lazily, on a
/// function's first call, and the mount only *builds* the lists: without this, the first
/// later reply's hand-over (`sim_client::hand_over`) also compiled the rebuild paths
/// (tachys' list and element `rebuild`, ~36 functions, 3-5 ms; docs/history/PERF_UI.md). Nothing on
/// screen changes: every text is rebuilt as it was, and an unchanged text is not written.
pub fn rebuild_once() -> Trigger {
    let t = Trigger::new();
    crate::ui::late::after_frames(REBUILD_ONCE_FRAMES, move || {
        if !t.is_disposed() {
            t.notify();
        }
    });
    t
}
