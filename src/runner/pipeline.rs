//! The phases every run goes through, in this order: what the run writes to
//! is made -> (the input pre-filled) -> the product started and ready -> the
//! measuring phases (load, warm-up and window; or a drain) -> the product
//! settles and stops -> its output is verified -> judged. A run kind (a
//! topic run, with or without faults; a drain; an ETL run) supplies its
//! hooks; the order, the product's life and the steps the kinds share are
//! here.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Result};

use super::monitor::{Grid, Helpers, Monitor, Watched};
use super::progress::Progress;
use super::{verify, Judged, RunContext, RunNames};
use crate::analysis::judge::Verified;
use crate::broker::admin::{self, OffsetReader, TopicRequest};
use crate::config::{LineRef, Workload};
use crate::interrupt::Interrupt;
use crate::isolation::{self, cgroup::ProductCgroup, Role};
use crate::process::Supervised;
use crate::products::{self, Deployed, Installation, LaunchSettings, StartPlan};
use crate::results::RunConfig;
use crate::workloads::{self, Expectation};

/// One run as its phases see it.
pub(super) struct Run<'r> {
    pub ctx: &'r RunContext<'r>,
    pub line: LineRef<'r>,
    pub installation: &'r Installation,
    pub workload: &'r Workload,
    pub config: &'r RunConfig,
    pub names: &'r RunNames,
    pub log_dir: &'r Path,
    pub progress: Progress,
    /// The product's cgroup, where the suite could make one.
    pub cgroup: Option<Arc<ProductCgroup>>,
}

impl<'r> Run<'r> {
    pub fn bootstrap(&self) -> &str {
        &self.ctx.broker.bootstrap
    }

    /// A monitor of the product, the run's broker and the kind's `helpers`,
    /// sampling on the grid anchored at `anchor_us`; and that grid.
    pub fn monitor<'m>(
        &self,
        offsets: &'m OffsetReader,
        product: &Deployed,
        helpers: Helpers,
        anchor_us: i64,
    ) -> (Grid, Monitor<'m>)
    where
        'r: 'm,
    {
        let grid = Grid {
            anchor_us,
            interval_us: self.config.sample_interval_ms as i64 * 1000,
        };
        let watched = Watched {
            product: product.roots(),
            // Read at each run: a chaos run earlier in the batch may have
            // restarted a node.
            broker: self
                .ctx
                .local_broker
                .map_or_else(Vec::new, |b| b.running_pids())
                .into_iter()
                .map(|pid| pid as i32)
                .collect(),
            helpers,
            cgroup: self.cgroup.clone(),
        };
        (grid, Monitor::new(offsets, self.names, watched, grid))
    }

    pub fn interrupt(&self) -> &Interrupt {
        self.ctx.interrupt
    }

    /// How the product's processes start, logging under `log_prefix`.
    pub fn start_plan<'p>(&'p self, log_prefix: &'p str) -> StartPlan<'p> {
        StartPlan {
            deployment: &self.config.deployment,
            log_dir: self.log_dir,
            log_prefix,
            ready_timeout: Duration::from_secs(self.ctx.bench.run.ready_timeout_s),
            interrupt: self.ctx.interrupt,
            hosts: self.ctx.placements.of(&self.line.product.name),
            cgroup: self.cgroup.as_deref(),
        }
    }

    /// Starts the product's deployment with `settings`, logging under
    /// `log_prefix`, and waits until every process is ready.
    pub fn start_product(&self, settings: &LaunchSettings, log_prefix: &str) -> Result<Deployed> {
        Deployed::start(
            self.line.product,
            self.installation,
            settings,
            &self.start_plan(log_prefix),
        )
    }
}

/// What a run kind does in each phase. The product is started before
/// [`RunKind::measure`] and stopped after [`RunKind::settle`] by the
/// pipeline itself, whatever the kind.
pub(super) trait RunKind {
    /// What the measuring phases leave for settling, verifying and judging.
    type Measured;

    /// Makes what the run writes to: its topics (and, for an ETL run, its
    /// table).
    fn create(&mut self, run: &mut Run<'_>) -> Result<()>;

    /// Runs before the product starts: a drain pre-fills its input.
    fn before_start(&mut self, _run: &mut Run<'_>, _offsets: &OffsetReader) -> Result<()> {
        Ok(())
    }

    /// The settings the product starts with.
    fn launch_settings(&self, run: &Run<'_>) -> Result<LaunchSettings> {
        launch_settings(run)
    }

    /// From the product ready to the load stopped: load, warm-up and
    /// window, or the drain.
    fn measure(
        &mut self,
        run: &mut Run<'_>,
        product: &mut Deployed,
        settings: &LaunchSettings,
        offsets: &OffsetReader,
    ) -> Result<Self::Measured>;

    /// Lets the product finish its input before it is stopped.
    fn settle(
        &mut self,
        run: &mut Run<'_>,
        measured: &mut Self::Measured,
        product: &mut Deployed,
        offsets: &OffsetReader,
    ) -> Result<()>;

    /// Checks the output, the product stopped.
    fn verify(
        &mut self,
        run: &mut Run<'_>,
        measured: &mut Self::Measured,
        offsets: &OffsetReader,
    ) -> Result<Verified>;

    /// What the phases measured, judged.
    fn judge(&self, run: &Run<'_>, measured: Self::Measured, verified: Verified) -> Result<Judged>;

    /// After the run, whatever its outcome.
    fn finish(&mut self, _run: &Run<'_>, _outcome: &Result<Judged>) {}
}

/// Runs `kind`'s phases in order; whatever happens, the kind finishes and
/// the progress bar is cleared.
pub(super) fn run_phases<K: RunKind>(run: &mut Run<'_>, kind: &mut K) -> Result<Judged> {
    let outcome = phases(run, kind);
    kind.finish(run, &outcome);
    run.progress.finish();
    outcome
}

fn phases<K: RunKind>(run: &mut Run<'_>, kind: &mut K) -> Result<Judged> {
    kind.create(run)?;
    let offsets = OffsetReader::for_group(run.bootstrap(), &run.names.group)?;
    kind.before_start(run, &offsets)?;
    run.progress.phase("starting the product");
    let settings = kind.launch_settings(run)?;
    let mut product = run.start_product(&settings, "product")?;
    let bench = &run.ctx.bench.run;
    let mut measured = kind.measure(run, &mut product, &settings, &offsets)?;
    kind.settle(run, &mut measured, &mut product, &offsets)?;
    product.stop(Duration::from_secs(bench.stop_grace_s));
    run.progress.phase("verifying");
    let verified = kind.verify(run, &mut measured, &offsets)?;
    kind.judge(run, measured, verified)
}

/// Creates the run's input, output and floor topics (a sink workload has
/// only its input).
pub(super) fn create_topics(run: &Run<'_>) -> Result<()> {
    let (workload, names) = (run.workload, run.names);
    let mut topics = vec![TopicRequest {
        name: names.input.clone(),
        partitions: workload.input.partitions,
        compression: workload.input.compression.clone(),
    }];
    if let Some(output) = workload.output_topic() {
        topics.extend([
            TopicRequest {
                name: names.output.clone(),
                partitions: output.partitions,
                compression: output.compression.clone(),
            },
            TopicRequest {
                name: names.floor.clone(),
                partitions: 1,
                compression: "producer".into(),
            },
        ]);
    }
    admin::create_topics(run.bootstrap(), run.ctx.broker.replicas(), &topics)
}

/// The settings the product is started with.
pub(super) fn launch_settings(run: &Run<'_>) -> Result<LaunchSettings> {
    let (line, config, names) = (run.line, run.config, run.names);
    Ok(LaunchSettings {
        bootstrap: run.bootstrap().to_string(),
        input_topic: names.input.clone(),
        output_topic: names.output.clone(),
        group_id: names.group.clone(),
        transactional_id: format!("{}-txn", names.group),
        delivery: line.line.delivery,
        commit_interval_ms: config.commit_interval_ms,
        parallelism: config.parallelism,
        input_partitions: run.workload.input.partition_count(),
        workload: run.workload.name.clone(),
        client: config.client.clone(),
        product_settings: products::product_settings(line.product, &config.product_settings)?,
        etl: None,
    })
}

/// The input the product owes output for: what it committed, or, for a
/// product that commits no offsets, all `records_sent`.
pub(super) fn expectation(
    run: &Run<'_>,
    offsets: &OffsetReader,
    records_sent: u64,
    pacing: crate::gendata::schedule::Pacing,
) -> Result<Expectation> {
    let partitions = run.workload.input.partition_count();
    let seed = run.config.seed;
    let (committed, covered) = if run.line.product.commits_offsets {
        let by_partition = offsets.committed_by_partition(&run.names.input)?;
        let covered = (partitions > 1).then(|| {
            Arc::new(workloads::commit_coverage(
                seed,
                records_sent,
                &by_partition,
            ))
        });
        (by_partition.iter().sum(), covered)
    } else {
        (records_sent, None)
    };
    Ok(Expectation {
        seed,
        input_records: records_sent,
        committed,
        covered,
        partitions,
        pacing,
        delivery: run.line.line.delivery,
    })
}

/// Reads the run's whole output topic against `expectation`, or says why it
/// cannot be checked.
pub(super) fn verify_output(
    run: &Run<'_>,
    offsets: &OffsetReader,
    expectation: Expectation,
) -> Result<Verified> {
    let (workload, names) = (run.workload, run.names);
    let input_written = offsets.high_watermark(&names.input)?;
    Ok(if input_written != expectation.input_records as i64 {
        Verified::Skipped(format!(
            "the input holds {input_written} records but gendata sent {}",
            expectation.input_records
        ))
    } else {
        let output = workloads::topic_output(workload)
            .ok_or_else(|| anyhow!("workload {} writes no topic", workload.name))?;
        match output.verifier(expectation) {
            Ok(mut verifier) => {
                verify::read_output(
                    run.bootstrap(),
                    &names.output,
                    verifier.as_mut(),
                    run.interrupt(),
                )?;
                Verified::Checked(verifier.finish())
            }
            Err(why) => Verified::Skipped(format!("{}: {why}", workload.name)),
        }
    })
}

/// The suite's own binary, as the kernel keeps it for this process.
const OWN_EXE: &str = "/proc/self/exe";

/// Starts one of the suite's own helper processes (`suite probe`, `suite gendata`).
pub(super) fn spawn_helper<S: AsRef<std::ffi::OsStr>>(
    name: &str,
    role: Role,
    args: &[S],
    log_dir: &Path,
    ready: &str,
) -> Result<Supervised> {
    // The running binary itself, whatever has happened to its file since
    // (a rebuild mid-batch replaces it): the child's exec of its own
    // /proc/self/exe opens the inode this process runs.
    let mut command = Command::new(OWN_EXE);
    command.args(args);
    isolation::place(&mut command, role);
    Supervised::spawn(name, command, log_dir, name, ready)
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::cache::Cache;
    use crate::config::{Readiness, Suite};
    use crate::interrupt::Interrupt;
    use crate::model::host::HostInfo;

    /// A kind that notes each hook as the pipeline calls it, with whether
    /// the product's process was alive then, and fails in `fail_in`.
    struct Recorder {
        calls: Vec<String>,
        fail_in: Option<&'static str>,
        product_pid: Option<u32>,
    }

    impl Recorder {
        fn note(&mut self, hook: &str) -> Result<()> {
            let alive = self
                .product_pid
                .is_some_and(|pid| Path::new(&format!("/proc/{pid}")).exists());
            let state = if alive { "up" } else { "down" };
            self.calls.push(format!("{hook} (product {state})"));
            match self.fail_in {
                Some(failing) if failing == hook => Err(anyhow!("{hook} failed")),
                _ => Ok(()),
            }
        }
    }

    impl RunKind for Recorder {
        type Measured = ();

        fn create(&mut self, _run: &mut Run<'_>) -> Result<()> {
            self.note("create")
        }

        fn before_start(&mut self, _run: &mut Run<'_>, _offsets: &OffsetReader) -> Result<()> {
            self.note("before_start")
        }

        fn measure(
            &mut self,
            _run: &mut Run<'_>,
            product: &mut Deployed,
            _settings: &LaunchSettings,
            _offsets: &OffsetReader,
        ) -> Result<()> {
            self.product_pid = product.roots().local.first().map(|&pid| pid as u32);
            self.note("measure")
        }

        fn settle(
            &mut self,
            _run: &mut Run<'_>,
            _measured: &mut (),
            _product: &mut Deployed,
            _offsets: &OffsetReader,
        ) -> Result<()> {
            self.note("settle")
        }

        fn verify(
            &mut self,
            _run: &mut Run<'_>,
            _measured: &mut (),
            _offsets: &OffsetReader,
        ) -> Result<Verified> {
            self.note("verify")?;
            Ok(Verified::Skipped("nothing to read".into()))
        }

        fn judge(&self, _run: &Run<'_>, _measured: (), _verified: Verified) -> Result<Judged> {
            // The recorder has nothing to judge: the pipeline's order is the
            // subject, and its outcome the finish hook sees.
            Err(anyhow!("judged"))
        }

        fn finish(&mut self, _run: &Run<'_>, outcome: &Result<Judged>) {
            let outcome = match outcome {
                Ok(_) => "ok".to_string(),
                Err(err) => err.to_string(),
            };
            self.calls.push(format!("finish: {outcome}"));
        }
    }

    /// A one-second run's configuration.
    fn short_config() -> RunConfig {
        RunConfig {
            warmup_s: 1,
            window_s: 1,
            ..RunConfig::example()
        }
    }

    /// A broker nothing listens on: the phases under test never reach it.
    fn unreachable_broker() -> crate::broker::BrokerInfo {
        crate::broker::BrokerInfo {
            kind: "external".into(),
            version: None,
            bootstrap: "127.0.0.1:9".into(),
            started_for_batch: false,
            warmed_s: None,
            uptime_s: None,
            nodes: 1,
            replication: 1,
            min_insync_replicas: 1,
            abandoned_transaction_check_ms: None,
        }
    }

    /// Runs the recorder's phases with a product that is a shell waiting to
    /// be stopped.
    fn recorded(fail_in: Option<&'static str>) -> (Vec<String>, Result<()>) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        let suite = Suite::load(&root.join("bench.yaml")).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let mut product = suite.products["rustpipe"].clone();
        product.start = vec![
            "sh".into(),
            "-c".into(),
            "echo stand-in ready; exec sleep 60".into(),
        ];
        product.ready = Readiness {
            stdout_contains: "stand-in ready".into(),
        };
        let line = LineRef {
            product: &product,
            line: &product.lines[0],
        };
        let broker = unreachable_broker();
        let (cache, host, interrupt) = (
            Cache::at(dir.path().to_path_buf()),
            HostInfo::current(),
            Interrupt::none(),
        );
        let ctx = RunContext {
            bench: &suite.bench,
            cache: &cache,
            broker: &broker,
            local_broker: None,
            sink: None,
            host: &host,
            placements: &crate::remote::Placements::default(),
            interrupt: &interrupt,
            batch_id: "test".into(),
            chaos: None,
            suite_commit: None,
            sweep: None,
        };
        let config = short_config();
        let installation = Installation {
            version: "test".into(),
            dir: None,
            bin: None,
        };
        let names = RunNames::for_run("pipeline-test");
        let mut run = Run {
            ctx: &ctx,
            line,
            installation: &installation,
            workload: &suite.workloads["stateless"],
            config: &config,
            names: &names,
            log_dir: dir.path(),
            progress: Progress::new("stand-in", "stateless", &config),
            cgroup: None,
        };
        let mut recorder = Recorder {
            calls: Vec::new(),
            fail_in,
            product_pid: None,
        };
        let outcome = run_phases(&mut run, &mut recorder).map(|_| ());
        // Whatever happened, the product is gone once the phases are over.
        recorder.fail_in = None;
        recorder.note("over").unwrap();
        (recorder.calls, outcome)
    }

    #[test]
    fn the_phases_run_in_order_and_the_product_lives_from_measure_to_settle() {
        let (calls, outcome) = recorded(None);
        assert_eq!(outcome.unwrap_err().to_string(), "judged");
        assert_eq!(
            calls,
            [
                "create (product down)",
                "before_start (product down)",
                "measure (product up)",
                "settle (product up)",
                "verify (product down)",
                "finish: judged",
                "over (product down)",
            ]
        );
    }

    #[test]
    fn a_failed_phase_ends_the_run_and_the_kind_still_finishes() {
        let (calls, outcome) = recorded(Some("measure"));
        assert_eq!(outcome.unwrap_err().to_string(), "measure failed");
        assert_eq!(
            calls,
            [
                "create (product down)",
                "before_start (product down)",
                "measure (product up)",
                "finish: measure failed",
                "over (product down)",
            ]
        );
    }
}
