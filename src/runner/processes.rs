//! The processes of a run while it goes: watched until a time, sampled on
//! schedule, warmed up until the product is steady, and the product killed
//! (and restarted) when a fault is injected.

use std::time::Duration;

use anyhow::Result;

use super::chaos::{InjectedKill, ResumeWatch};
use super::monitor::{Grid, Monitor};
use super::progress::Progress;
use crate::analysis;
use crate::clock::{now_us, sleep_until_us};
use crate::interrupt::{Interrupt, Interrupted};
use crate::process::Supervised;
use crate::products::{Deployed, StartPlan};
use crate::results::RunConfig;

/// Pause between an injected kill and the restart: produce requests the dead
/// process had already sent land first, so they do not pass for resumed output.
const SETTLE_AFTER_KILL: Duration = Duration::from_millis(100);

/// How long before the window opens it is announced to gendata and the
/// probe, which look for it every 25 ms.
pub(super) const ANNOUNCE_LEAD: Duration = Duration::from_secs(1);
/// How far back a warm-up's evidence of steady state is read.
const STEADY_LOOK_BACK: Duration = Duration::from_secs(10);

/// What a steady-state warm-up waits for, and its bounds.
pub(super) struct SteadyWarmUp {
    pub earliest_start_us: i64,
    pub latest_start_us: i64,
    pub offered_per_s: f64,
    pub rule: analysis::steady::SteadyRule,
}

/// How a warm-up ended.
pub(super) struct WarmUp {
    pub window_start_us: i64,
    /// Why the product was still not steady when the warm-up hit its cap.
    pub not_steady: Option<String>,
}

/// The steady-state rule from bench.yaml's tolerances: a backlog of up to
/// one commit interval and a second (the sample's own staleness) is none.
pub(super) fn steady_rule(
    tolerances: &crate::config::Tolerances,
    config: &RunConfig,
) -> analysis::steady::SteadyRule {
    analysis::steady::SteadyRule {
        span_us: STEADY_LOOK_BACK.as_micros() as i64,
        rate_tolerance: tolerances.steady_rate,
        cpu_tolerance: tolerances.steady_cpu,
        backlog_s: config.commit_interval_ms as f64 / 1000.0 + 1.0,
    }
}

/// The processes of a run, watched while it goes.
pub(super) struct Processes<'p> {
    pub product: &'p mut Deployed,
    /// Killed on purpose and not restarted: its absence is no failure.
    pub product_down: bool,
    /// gendata and the probe (an ETL run has no probe): they end by
    /// themselves at the window's end.
    pub helpers: Vec<&'p mut Supervised>,
}

impl Processes<'_> {
    /// Waits until `until_us`, sampling on schedule, and fails as soon as the
    /// product exits, a helper fails, or Ctrl-C arrives.
    pub fn watch_until(
        &mut self,
        until_us: i64,
        interrupt: &Interrupt,
        progress: &mut Progress,
        monitor: &mut Monitor<'_>,
    ) -> Result<()> {
        loop {
            let now = now_us();
            if now >= until_us {
                return Ok(());
            }
            if !self.product_down {
                self.product.check_alive()?;
            }
            for helper in self.helpers.iter_mut() {
                helper.check_not_failed()?;
            }
            if interrupt.is_set() {
                return Err(Interrupted.into());
            }
            monitor.sample_if_due(now)?;
            monitor.poll_offsets_if_due(now)?;
            progress.tick(now);
            sleep_until_us((now + 100_000).min(until_us).min(monitor.next_due_us()));
        }
    }

    /// Watches the warm-up until the product is steady, or until the cap:
    /// from the earliest window start on, after each sample the evidence of
    /// the last [`STEADY_LOOK_BACK`] is read, and the window starts on the
    /// first grid time at least [`ANNOUNCE_LEAD`] after the verdict, so the
    /// helpers learn of it before it opens.
    pub fn warm_up_until_steady(
        &mut self,
        plan: SteadyWarmUp,
        grid: Grid,
        interrupt: &Interrupt,
        progress: &mut Progress,
        monitor: &mut Monitor<'_>,
    ) -> Result<WarmUp> {
        let lead_us = ANNOUNCE_LEAD.as_micros() as i64;
        self.watch_until(
            plan.earliest_start_us - lead_us,
            interrupt,
            progress,
            monitor,
        )?;
        loop {
            let now = now_us();
            let why = analysis::steady::not_steady_yet(
                &monitor.rows,
                &monitor.offset_polls,
                plan.offered_per_s,
                monitor.ticks_per_s(),
                &plan.rule,
            );
            let at_cap = now + lead_us >= plan.latest_start_us;
            if why.is_none() || at_cap {
                let window_start_us = grid.next_after(now + lead_us);
                return Ok(WarmUp {
                    window_start_us,
                    not_steady: why,
                });
            }
            if let Some(why) = &why {
                progress.detail("warm-up until steady", why);
            }
            // Until the next sample is due, then take it: the verdict is
            // read again on new evidence only.
            self.watch_until(monitor.next_due_us(), interrupt, progress, monitor)?;
            monitor.sample_if_due(now_us())?;
        }
    }

    /// Kills the product's whole tree and, with `restart`, starts it again;
    /// its output is watched for until `watch_until_us`.
    pub fn crash(
        &mut self,
        restart: Option<impl FnOnce() -> Result<Deployed>>,
        bootstrap: &str,
        output_topic: &str,
        watch_until_us: i64,
    ) -> Result<InjectedKill> {
        let killed_at_us = now_us();
        let killed_processes = self.product.kill();
        std::thread::sleep(SETTLE_AFTER_KILL);
        let watch = ResumeWatch::start(bootstrap, output_topic, watch_until_us)?;
        match restart {
            Some(restart) => *self.product = restart()?,
            None => self.product_down = true,
        }
        Ok(InjectedKill {
            killed_at_us,
            killed_processes,
            member: None,
            watch,
        })
    }

    /// Kills the product's member `label` alone and, with `restart`,
    /// starts it again as `restart` plans; the product's output is watched
    /// for until `watch_until_us`.
    pub fn crash_member(
        &mut self,
        label: &str,
        restart: Option<&StartPlan<'_>>,
        bootstrap: &str,
        output_topic: &str,
        watch_until_us: i64,
    ) -> Result<InjectedKill> {
        let killed_at_us = now_us();
        let killed_processes = self.product.kill_member(label)?;
        std::thread::sleep(SETTLE_AFTER_KILL);
        let watch = ResumeWatch::start(bootstrap, output_topic, watch_until_us)?;
        if let Some(plan) = restart {
            self.product.restart_member(label, plan)?;
        }
        Ok(InjectedKill {
            killed_at_us,
            killed_processes,
            member: Some(label.to_string()),
            watch,
        })
    }
}
