//! A topic run: gendata writes on its schedule, the probe times the output
//! topic, the window opens after a fixed or a steady-state warm-up, and the
//! faults of a chaos campaign land inside it.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{anyhow, Result};

use super::chaos::{self, BrokerFault, Fault, InjectedBrokerRestart, InjectedKill};
use super::monitor::{Grid, Helpers, Monitor};
use super::pipeline::{create_topics, expectation, spawn_helper, verify_output, Run, RunKind};
use super::processes::{steady_rule, Processes, SteadyWarmUp, WarmUp, ANNOUNCE_LEAD};
use super::settle::{settle_committed_and_quiet, settle_quiet_output};
use super::{record_warmup, Judged, HELPER_EXIT_TIMEOUT, SCHEDULE_LEAD};
use crate::analysis::judge::{judge, JudgeInputs, Settle, Verified};
use crate::analysis::window::{OffsetRead, Sample};
use crate::broker::admin::OffsetReader;
use crate::clock::now_us;
use crate::gendata::schedule::Pacing;
use crate::gendata::{GendataPlan, GendataSummary};
use crate::isolation::Role;
use crate::probe::{ProbeSummary, READY_LINE as PROBE_READY};
use crate::process::Supervised;
use crate::products::{Deployed, LaunchSettings};
use crate::results::Chaos;
use crate::workloads::TopicOutput;

/// A topic run, as its phases go.
pub(super) struct TopicRun {
    /// The workload's output, which the sanity checks judge.
    output: &'static dyn TopicOutput,
}

/// When the load runs and where its helpers report.
struct LoadPlan {
    /// gendata's first slot.
    start_us: i64,
    /// The earliest window: after the least warm-up.
    earliest_start_us: i64,
    window_us: i64,
    gendata_file: PathBuf,
}

/// Where the run announces its window: to the probe always, and to gendata
/// after a steady-state warm-up (a fixed one announces it before the load).
fn window_file(run: &Run<'_>) -> PathBuf {
    run.log_dir.join("window.json")
}

/// Where the probe writes its summary.
fn probe_file(run: &Run<'_>) -> PathBuf {
    run.log_dir.join("probe.json")
}

/// What the measuring phases produced, before it becomes figures.
pub(super) struct Measured {
    plan: LoadPlan,
    /// gendata's pacing.
    pacing: Pacing,
    /// Samples from the first after start-up to the window's end.
    rows: Vec<Sample>,
    /// Index of the row taken at the window's start.
    window_start: usize,
    /// The offsets read between rows.
    offset_polls: Vec<OffsetRead>,
    window_start_us: i64,
    ticks_per_s: f64,
    gendata: GendataSummary,
    settle: Option<Settle>,
    /// Killed on purpose and not restarted: there is nothing to settle.
    product_down: bool,
    kills: Vec<InjectedKill>,
    broker_restart: Option<InjectedBrokerRestart>,
    chaos: Option<Chaos>,
    /// Why the product was not steady when a steady-state warm-up hit its cap.
    not_steady: Option<String>,
}

/// The window as the monitor saw it.
struct Window {
    rows: Vec<Sample>,
    window_start: usize,
    offset_polls: Vec<OffsetRead>,
    ticks_per_s: f64,
}

impl TopicRun {
    pub(super) fn new(run: &Run<'_>) -> Result<TopicRun> {
        let output = crate::workloads::topic_output(run.workload)
            .ok_or_else(|| anyhow!("workload {} writes no topic", run.workload.name))?;
        Ok(TopicRun { output })
    }

    /// The load's times, from the probe ready now.
    fn plan(run: &Run<'_>) -> LoadPlan {
        let config = run.config;
        let start_us = now_us() + SCHEDULE_LEAD.as_micros() as i64;
        LoadPlan {
            start_us,
            earliest_start_us: start_us + config.warmup_s as i64 * 1_000_000,
            window_us: config.window_s as i64 * 1_000_000,
            gendata_file: run.log_dir.join("gendata.json"),
        }
    }

    /// When gendata stops: at a fixed window's end, or (announced) at the
    /// latest window's end, the cap's, plus the announcement's lead and a
    /// sample interval, the most by which a window may start past the cap.
    fn latest_end_us(run: &Run<'_>, plan: &LoadPlan) -> i64 {
        match run.config.warmup_cap_s {
            Some(cap_s) => {
                plan.start_us
                    + cap_s as i64 * 1_000_000
                    + plan.window_us
                    + ANNOUNCE_LEAD.as_micros() as i64
                    + run.config.sample_interval_ms as i64 * 1000
            }
            None => plan.earliest_start_us + plan.window_us,
        }
    }

    /// Starts the probe and waits until it reads the output. It learns its
    /// window from the run's window file, so the schedule can start as soon
    /// as the probe is ready rather than after a lead long enough for a slow
    /// start.
    fn start_probe(&self, run: &Run<'_>) -> Result<Supervised> {
        let probe_args: Vec<String> = [
            "probe",
            "--bootstrap",
            run.bootstrap(),
            "--topic",
            &run.names.output,
            "--floor-topic",
            &run.names.floor,
            "--interval-ms",
            &run.config.sample_interval_ms.to_string(),
            "--stamp-field",
            self.output.stamp_field(),
            "--summary",
            &probe_file(run).to_string_lossy(),
            "--window-file",
            &window_file(run).to_string_lossy(),
        ]
        .map(str::to_string)
        .to_vec();
        let mut probe = spawn_helper("probe", Role::Probe, &probe_args, run.log_dir, PROBE_READY)?;
        probe.wait_ready(Duration::from_secs(30), run.interrupt())?;
        Ok(probe)
    }

    /// Starts gendata on `plan`'s schedule. A fixed window is announced
    /// first, so the probe knows it before gendata's first slot; a steady
    /// warm-up announces it later.
    fn start_gendata(run: &Run<'_>, plan: &LoadPlan) -> Result<Supervised> {
        let config = run.config;
        let steady = config.warmup_cap_s.is_some();
        if !steady {
            let window = crate::handoff::WindowAnnouncement {
                start_us: plan.earliest_start_us,
                end_us: plan.earliest_start_us + plan.window_us,
            };
            crate::handoff::announce(&window_file(run), &window)?;
        }
        let gendata_plan = GendataPlan {
            bootstrap: run.bootstrap().to_string(),
            topic: run.names.input.clone(),
            rate: config.rate,
            seed: config.seed,
            start_us: plan.start_us,
            window_start_us: plan.earliest_start_us,
            end_us: Self::latest_end_us(run, plan),
            window_file: steady.then(|| window_file(run)),
            max_records: None,
            summary: Some(plan.gendata_file.clone()),
            avro_events: None,
            partitions: run.workload.input.partitions as u32,
        };
        spawn_helper(
            "gendata",
            Role::Gendata,
            &gendata_plan.command_args(),
            run.log_dir,
            "",
        )
    }

    /// The warm-up: fixed, or until the product is steady (then the window
    /// is announced to gendata and the probe).
    fn warm_up(
        run: &mut Run<'_>,
        plan: &LoadPlan,
        grid: Grid,
        processes: &mut Processes<'_>,
        monitor: &mut Monitor<'_>,
    ) -> Result<WarmUp> {
        let config = run.config;
        let Some(cap_s) = config.warmup_cap_s else {
            return Ok(WarmUp {
                window_start_us: plan.earliest_start_us,
                not_steady: None,
            });
        };
        let steady = SteadyWarmUp {
            earliest_start_us: plan.earliest_start_us,
            latest_start_us: plan.start_us + cap_s as i64 * 1_000_000,
            offered_per_s: config.rate as f64,
            rule: steady_rule(&run.ctx.bench.tolerances, config),
        };
        let interrupt = run.ctx.interrupt;
        let warmup =
            processes.warm_up_until_steady(steady, grid, interrupt, &mut run.progress, monitor)?;
        crate::handoff::announce(
            &window_file(run),
            &crate::handoff::WindowAnnouncement {
                start_us: warmup.window_start_us,
                end_us: warmup.window_start_us + plan.window_us,
            },
        )?;
        run.progress.set_total(
            ((warmup.window_start_us - plan.start_us + plan.window_us) / 1_000_000).max(0) as u64,
        );
        Ok(warmup)
    }
}

/// The faults injected into one window, as they went.
#[derive(Default)]
struct Injected {
    kills: Vec<InjectedKill>,
    broker_restart: Option<InjectedBrokerRestart>,
}

/// Watches the window to its end, injecting the chaos plan's faults on
/// their schedule; each fault's output is watched until the next one.
fn window_with_faults(
    run: &mut Run<'_>,
    settings: &LaunchSettings,
    offsets: &OffsetReader,
    window_start_us: i64,
    window_end_us: i64,
    processes: &mut Processes<'_>,
    monitor: &mut Monitor<'_>,
) -> Result<Injected> {
    let ctx = run.ctx;
    let interrupt = ctx.interrupt;
    let faults = ctx
        .chaos
        .as_ref()
        .map(|plan| chaos::schedule(plan, window_start_us))
        .unwrap_or_default();
    let mut injected = Injected::default();
    for (i, &(at_us, fault)) in faults.iter().enumerate() {
        processes.watch_until(at_us, interrupt, &mut run.progress, monitor)?;
        let watch_until_us = faults.get(i + 1).map_or(window_end_us, |&(next, _)| next);
        match fault {
            Fault::Kill => {
                let kill = inject_kill(
                    run,
                    settings,
                    processes,
                    injected.kills.len(),
                    watch_until_us,
                )?;
                monitor.watch_product(processes.product.roots());
                injected.kills.push(kill);
            }
            Fault::BrokerRestart => {
                let restart = inject_broker_restart(run, offsets, watch_until_us)?;
                monitor.watch_broker(restart.1);
                injected.broker_restart = Some(restart.0);
            }
        }
        run.progress.phase("measuring");
    }
    processes.watch_until(window_end_us, interrupt, &mut run.progress, monitor)?;
    Ok(injected)
}

/// Kills the product (or, with a chaos `member`, its next member of that
/// role), restarts it when the plan says so, and watches its output until
/// `watch_until_us`.
fn inject_kill(
    run: &mut Run<'_>,
    settings: &LaunchSettings,
    processes: &mut Processes<'_>,
    kills_before: usize,
    watch_until_us: i64,
) -> Result<InjectedKill> {
    let chaos = run.ctx.chaos.as_ref();
    let restart_product = chaos.is_some_and(|plan| plan.restart);
    let log_prefix = format!("product-restart-{}", kills_before + 1);
    match chaos.and_then(|plan| plan.member.as_deref()) {
        Some(role) => {
            let label = processes.product.nth_member(role, kills_before)?;
            run.progress.phase(&if restart_product {
                format!("{label} killed; restarting it")
            } else {
                format!("{label} killed")
            });
            let plan = run.start_plan(&log_prefix);
            processes.crash_member(
                &label,
                restart_product.then_some(&plan),
                run.bootstrap(),
                &run.names.output,
                watch_until_us,
            )
        }
        None => {
            run.progress.phase(if restart_product {
                "product killed; restarting"
            } else {
                "product killed"
            });
            let restart = || run.start_product(settings, &log_prefix);
            processes.crash(
                restart_product.then_some(restart),
                run.bootstrap(),
                &run.names.output,
                watch_until_us,
            )
        }
    }
}

/// Kills a node of the suite's local broker (the input's leader when the
/// plan says so) and restarts it; gives the restart and the broker's pids
/// now, for the monitor.
fn inject_broker_restart(
    run: &mut Run<'_>,
    offsets: &OffsetReader,
    watch_until_us: i64,
) -> Result<(InjectedBrokerRestart, Vec<i32>)> {
    let ctx = run.ctx;
    run.progress.phase("broker node killed; restarting");
    let broker = ctx
        .local_broker
        .ok_or_else(|| anyhow!("chaos: a broker restart needs the suite's local broker"))?;
    let fault = BrokerFault {
        broker,
        leader: ctx.chaos.as_ref().is_some_and(|plan| plan.broker_leader),
        input: &run.names.input,
        output: &run.names.output,
        run_tag: &run.names.group,
    };
    let restart = InjectedBrokerRestart::inject(fault, offsets, watch_until_us, ctx.interrupt)?;
    let pids = broker
        .running_pids()
        .into_iter()
        .map(|p| p as i32)
        .collect();
    Ok((restart, pids))
}

impl RunKind for TopicRun {
    type Measured = Measured;

    fn create(&mut self, run: &mut Run<'_>) -> Result<()> {
        run.progress.phase("creating topics");
        create_topics(run)
    }

    fn measure(
        &mut self,
        run: &mut Run<'_>,
        product: &mut Deployed,
        settings: &LaunchSettings,
        offsets: &OffsetReader,
    ) -> Result<Measured> {
        let mut probe = self.start_probe(run)?;
        let plan = Self::plan(run);
        let mut gendata = Self::start_gendata(run, &plan)?;
        // Samples fall on start + k * interval: whichever grid time the
        // window starts at, both its bounds are samples.
        let helpers = Helpers {
            gendata: Some(gendata.pgid() as i32),
            probe: Some(probe.pgid() as i32),
            sink: None,
        };
        let (grid, mut monitor) = run.monitor(offsets, product, helpers, plan.start_us);
        run.progress.phase("warm-up");
        let mut processes = Processes {
            product,
            product_down: false,
            helpers: vec![&mut gendata, &mut probe],
        };
        let warmup = Self::warm_up(run, &plan, grid, &mut processes, &mut monitor)?;
        let window_start_us = warmup.window_start_us;
        let window_end_us = window_start_us + plan.window_us;
        let interrupt = run.ctx.interrupt;
        processes.watch_until(window_start_us, interrupt, &mut run.progress, &mut monitor)?;
        monitor.sample(true)?;
        let window_start = monitor.rows.len() - 1;
        run.progress.phase("measuring");
        let injected = window_with_faults(
            run,
            settings,
            offsets,
            window_start_us,
            window_end_us,
            &mut processes,
            &mut monitor,
        )?;
        monitor.sample(true)?;
        let window = Window {
            ticks_per_s: monitor.ticks_per_s(),
            rows: std::mem::take(&mut monitor.rows),
            window_start,
            offset_polls: std::mem::take(&mut monitor.offset_polls),
        };
        let product_down = processes.product_down;
        // stop the load: gendata and the probe end with the window
        run.progress.phase("stopping the load");
        gendata.wait_exit(HELPER_EXIT_TIMEOUT, interrupt)?;
        probe.wait_exit(HELPER_EXIT_TIMEOUT, interrupt)?;
        let gendata: GendataSummary = crate::handoff::read(&plan.gendata_file)?;
        let pacing = Pacing::new(plan.start_us, run.config.rate);
        Ok(Measured {
            plan,
            pacing,
            rows: window.rows,
            window_start: window.window_start,
            offset_polls: window.offset_polls,
            window_start_us,
            ticks_per_s: window.ticks_per_s,
            gendata,
            settle: None,
            product_down,
            kills: injected.kills,
            broker_restart: injected.broker_restart,
            chaos: None,
            not_steady: warmup.not_steady,
        })
    }

    /// The product finishes the input before it is stopped, so the verify
    /// phase covers every record sent; a product killed and not restarted
    /// has nothing to settle.
    fn settle(
        &mut self,
        run: &mut Run<'_>,
        measured: &mut Measured,
        product: &mut Deployed,
        offsets: &OffsetReader,
    ) -> Result<()> {
        if measured.product_down {
            return Ok(());
        }
        run.progress.phase("settling");
        let bound = Duration::from_secs(run.ctx.bench.run.settle_s);
        let interrupt = run.ctx.interrupt;
        measured.settle = Some(if run.line.product.commits_offsets {
            let (settle, timeline) = settle_committed_and_quiet(
                offsets,
                run.names,
                self.output
                    .owed_until(measured.pacing, measured.gendata.records_sent),
                bound,
                product,
                interrupt,
            )?;
            crate::handoff::write(Some(&run.log_dir.join("settle.json")), &timeline)?;
            settle
        } else {
            settle_quiet_output(offsets, &run.names.output, bound, product, interrupt)?
        });
        Ok(())
    }

    fn verify(
        &mut self,
        run: &mut Run<'_>,
        measured: &mut Measured,
        offsets: &OffsetReader,
    ) -> Result<Verified> {
        let window_start_us = measured.window_start_us;
        measured.chaos = match &run.ctx.chaos {
            Some(plan) => Some(Chaos::new(
                plan.restart,
                std::mem::take(&mut measured.kills)
                    .into_iter()
                    .map(|kill| kill.outcome(window_start_us))
                    .collect::<Result<_>>()?,
                measured
                    .broker_restart
                    .take()
                    .map(|restart| restart.outcome(window_start_us))
                    .transpose()?,
            )),
            None => None,
        };
        let records_sent = measured.gendata.records_sent;
        let expectation = expectation(run, offsets, records_sent, measured.pacing)?;
        verify_output(run, offsets, expectation)
    }

    fn judge(&self, run: &Run<'_>, m: Measured, verified: Verified) -> Result<Judged> {
        let probe: ProbeSummary = crate::handoff::read(&probe_file(run))?;
        let mut judgement = judge(&JudgeInputs {
            samples: &m.rows,
            window_start: m.window_start,
            offset_polls: &m.offset_polls,
            window_start_us: m.window_start_us,
            ticks_per_s: m.ticks_per_s,
            config: run.config,
            workload: self.output,
            pacing: m.pacing,
            gendata: &m.gendata,
            probe: &probe,
            verified: &verified,
            settle: m.settle,
            chaos: m.chaos.is_some(),
            tolerances: &run.ctx.bench.tolerances,
        });
        let warmup_used_s = (m.window_start_us - m.plan.start_us) as f64 / 1e6;
        record_warmup(&mut judgement, warmup_used_s, m.not_steady);
        Ok(Judged {
            judgement,
            latency_histogram: Some(probe.output.histogram.clone()),
            latency_series: probe.intervals.clone(),
            gendata: m.gendata,
            chaos: m.chaos,
        })
    }
}
