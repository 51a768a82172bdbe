//! Command-line definitions only: parsing never does anything.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::config::{ChaosPlan, LineSpec, Profile, Setting};

/// streamsuite: a cross-engine streaming latency suite.
#[derive(Debug, Parser)]
#[command(
    name = "suite",
    version = env!("SUITE_VERSION"),
    about,
    after_help = crate::exit::HELP
)]
pub struct Cli {
    /// The bench definition; products/ and workloads/ are read beside it.
    #[arg(long, global = true, default_value = "bench.yaml")]
    pub config: PathBuf,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run one product line on one workload and append the result.
    Run(RunArgs),
    /// Run several product lines on one workload interleaved, round by round, in one batch.
    Batch(BatchArgs),
    /// A chaos campaign: one long window in which the product is killed
    /// (SIGKILL to its whole tree) and restarted N times, then every record
    /// of the run counted.
    Chaos(ChaosArgs),
    /// Sweep lines over offered rates (latency against rate, and each line's
    /// maximum sustainable throughput by bisection) or over parallelism.
    Sweep(SweepArgs),
    /// Paired ratios of two lines of one batch, round by round.
    Compare(CompareArgs),
    /// Measure a line at a baseline version and as it is now, interleaved;
    /// exit 4 on a regression beyond the threshold, 1 on an error.
    Regress(RegressArgs),
    /// Measure a line's noise floor: the same line twice per round (an
    /// A/A check); per figure its spread and the smallest regression
    /// `suite regress` would catch. Exit 4 when the A/A reads as a regression.
    Noise(NoiseArgs),
    /// Show products, their lines and workloads, and what is runnable here.
    List(ListArgs),
    /// Write the HTML report pages from the results files.
    Report(ReportArgs),
    /// Write a run's latency histogram (.hgrm), a workload's figures as tidy
    /// rows (CSV, JSONL) or its page's tables (Markdown).
    Export(ExportArgs),
    /// Install a product (one version) into the cache; `suite run` does this on first use.
    Install(InstallArgs),
    /// Measure the Avro pipeline's CPU cost in process (`suite rig cpu`).
    Rig {
        #[command(subcommand)]
        rig: RigCommand,
    },
    /// Start, stop or inspect the local Kafka broker by hand.
    Broker {
        #[command(subcommand)]
        action: BrokerAction,
    },
    /// Start, stop or inspect the local ClickHouse by hand.
    Clickhouse {
        #[command(subcommand)]
        action: ClickHouseAction,
    },
    /// Print a completion script for a shell, to be sourced or installed
    /// (`suite completions bash > /etc/bash_completion.d/suite`).
    Completions { shell: clap_complete::Shell },
    /// Generate the deterministic record stream (started by `suite run`).
    #[command(hide = true)]
    Gendata(GendataArgs),
    /// Time records arriving on the output topic (started by `suite run`).
    #[command(hide = true)]
    Probe(ProbeArgs),
}

#[derive(Debug, Args)]
pub struct RunArgs {
    /// A product line (rustpipe-eos) or a product (rustpipe, with --mode).
    pub product: String,
    /// A workload from workloads/.
    pub workload: String,
    /// Delivery mode: eos (exactly-once) or alos (at-least-once).
    #[arg(long, value_parser = ["eos", "alos"])]
    pub mode: Option<String>,
    #[command(flatten)]
    pub options: RunOptions,
    /// Runs of the same line, one after another, in one batch.
    #[arg(long, default_value_t = 1)]
    pub repeat: u32,
    /// Inject faults mid-window: SIGKILL the product's whole tree SECONDS
    /// into the window (with `restart`, start it again at once), and/or
    /// SIGKILL a node of the local broker (the input partition's leader
    /// with `leader`, else the last node) and start it again.
    #[arg(
        long,
        value_name = "kill-at=SECONDSs[,restart][,broker-kill-at=SECONDSs[,leader]]"
    )]
    pub chaos: Option<ChaosPlan>,
    /// The product version to run, installed on first use (default: product.yaml's);
    /// for a cargo product, a git revision of its repository, built once per commit.
    #[arg(long, value_name = "VERSION")]
    pub product_version: Option<String>,
    /// A drain run: pre-fill the input with N records before the product
    /// starts, then time how fast it consumes them (its read capacity).
    #[arg(long, value_name = "N", conflicts_with_all = ["rate", "warmup", "window", "chaos"])]
    pub drain: Option<u64>,
    /// Change a bench.yaml setting for these runs (repeatable), e.g.
    /// `--set client.fetch_min_bytes=65536`; recorded with each run.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub settings: Vec<Setting>,
    /// Print the runs as one JSON document on standard output (progress
    /// stays on standard error).
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ChaosArgs {
    /// A product line (rustpipe-eos).
    pub line: String,
    /// A workload from workloads/.
    pub workload: String,
    /// How many times the product is killed and restarted.
    #[arg(long, default_value_t = 10)]
    pub kills: u32,
    /// Seconds between kills, the first that far into the window; the
    /// window is sized to hold every kill and the last one's recovery
    /// (default 20, the spacing of every published campaign, longer than
    /// any product's recovery here).
    #[arg(long, value_name = "SECONDS", conflicts_with_all = ["seed", "window"])]
    pub every: Option<u64>,
    /// Kill at random times drawn from this seed, within --window, instead
    /// of at fixed steps.
    #[arg(long, requires = "window")]
    pub seed: Option<u64>,
    /// Kill one member of this role of the product's deployment each time
    /// (taskmanager, member), the role's members in turn, instead of the
    /// whole product; the other members keep running.
    #[arg(long, value_name = "ROLE")]
    pub member: Option<String>,
    #[command(flatten)]
    pub options: RunOptions,
    /// Change a bench.yaml setting for this run (repeatable); recorded with it.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub settings: Vec<Setting>,
    /// Print the run as one JSON document on standard output (progress
    /// stays on standard error).
    #[arg(long)]
    pub json: bool,
}

/// The options every measuring command takes: the load, where results go,
/// and what to do when another run holds the host.
#[derive(Debug, Clone, Args)]
pub struct RunOptions {
    /// Records per second offered (0 = as fast as gendata can).
    #[arg(long)]
    pub rate: Option<u64>,
    /// A fixed warm-up of this many seconds (default: from bench.yaml's
    /// run.warmup_s until the product is steady, at most run.warmup_cap_s).
    #[arg(long)]
    pub warmup: Option<u64>,
    /// Seconds measured; at least 5 samples' worth (5 s at a 1000 ms sample interval).
    #[arg(long)]
    pub window: Option<u64>,
    /// Folder for results JSONL (default: bench.yaml's results_dir).
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// When another run holds this host, refuse at once instead of waiting for it.
    #[arg(long)]
    pub no_wait: bool,
    /// Whose settings: `uniform` (bench.yaml's client profile, the same for
    /// every line) or `expert` (each product's `expert:` section over it,
    /// its own bench point).
    #[arg(long, value_enum, default_value_t = Profile::Uniform)]
    pub profile: Profile,
    /// The form each product runs in: `embedded` (one process tree, the
    /// default) or a deployment its product.yaml offers, such as `cluster`
    /// (the engine's own cluster processes on this host). Sets run.deploy.
    #[arg(long, value_name = "NAME")]
    pub deploy: Option<String>,
}

/// Rounds of `suite batch` and `suite regress`: the fewest where an exact
/// sign test can reach p <= 0.05 (1/32 when every round agrees).
pub const DEFAULT_ROUNDS: u32 = 5;

#[derive(Debug, Args)]
pub struct BatchArgs {
    /// Product lines (rustpipe, rustpipe-eos), run in this order in round 1
    /// and rotated by one place each round after (A B, B A, ...);
    /// `LINE@KEY=VALUE` runs a line with a client setting, commit interval
    /// product setting or deployment of its own (rustpipe@client.fetch_min_bytes=65536,
    /// pathway@product.autocommit_duration_ms=2).
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub lines: Vec<LineSpec>,
    /// Every line runnable here whose product implements the workload.
    #[arg(long)]
    pub all: bool,
    /// A workload from workloads/.
    #[arg(long)]
    pub workload: String,
    #[command(flatten)]
    pub options: RunOptions,
    /// Rounds: each round runs every line once.
    #[arg(long, default_value_t = DEFAULT_ROUNDS)]
    pub repeat: u32,
    /// Change a bench.yaml setting for these runs (repeatable), e.g.
    /// `--set client.fetch_min_bytes=65536`; recorded with each run.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub settings: Vec<Setting>,
    /// Print the batch's runs as one JSON document on standard output
    /// (progress stays on standard error).
    #[arg(long)]
    pub json: bool,
}

/// Rounds of `suite sweep`: the fewest where each point's median has an
/// interval.
pub const DEFAULT_SWEEP_ROUNDS: u32 = 3;

/// Bisection steps of a rate sweep: each halves a line's bracket.
pub const DEFAULT_BISECT_STEPS: u32 = 3;

#[derive(Debug, Args)]
#[command(group(clap::ArgGroup::new("axis").required(true).args(["rates", "parallelism"])))]
pub struct SweepArgs {
    /// Product lines (rustpipe, rustpipe-eos), each once; at each point of
    /// the grid they run in this order in round 1, rotated after.
    #[arg(required = true)]
    pub lines: Vec<String>,
    /// A workload from workloads/.
    #[arg(long)]
    pub workload: String,
    /// A rate sweep: offered rates in records/s, comma-separated
    /// (2000,4000,8000), each above 0.
    #[arg(long, value_name = "A,B,C", conflicts_with = "parallelism")]
    pub rates: Option<String>,
    /// A parallelism sweep: values of run.parallelism, comma-separated
    /// (1,2,4), each 1 or more; the rate is --rate's.
    #[arg(long, value_name = "A,B,C")]
    pub parallelism: Option<String>,
    /// Rounds: each round runs every line at every point of the grid once.
    #[arg(long, default_value_t = DEFAULT_SWEEP_ROUNDS)]
    pub rounds: u32,
    /// A rate sweep's bisection steps after the grid: each runs every line
    /// whose bracket is closed at its midpoint, `--rounds` times (default 3;
    /// 0 for the grid alone).
    #[arg(long, value_name = "N", conflicts_with = "parallelism")]
    pub bisect_steps: Option<u32>,
    #[command(flatten)]
    pub options: RunOptions,
    /// Change a bench.yaml setting for these runs (repeatable), e.g.
    /// `--set sweep.p99_bound_ms=200`; recorded with each run.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub settings: Vec<Setting>,
}

#[derive(Debug, Args)]
pub struct NoiseArgs {
    /// A product line (rustpipe, kafka-streams-eos).
    pub line: String,
    /// A workload from workloads/.
    pub workload: String,
    /// Rounds, each two runs of the line in rotated order.
    #[arg(long, default_value_t = DEFAULT_ROUNDS)]
    pub repeat: u32,
    /// The regression threshold the gate is read at, in percent, as
    /// `suite regress --threshold` takes it.
    #[arg(long, default_value_t = 5.0)]
    pub threshold: f64,
    /// A bench.yaml setting for every run of the check (repeatable), such
    /// as `isolation=auto` or `run.window_s=60`: the noise at that point.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub settings: Vec<Setting>,
    /// Print the table and the verdict as JSON on standard output.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub options: RunOptions,
}

#[derive(Debug, Args)]
pub struct RegressArgs {
    /// A product line (rustpipe, rustpipe-eos).
    pub line: String,
    /// A workload from workloads/.
    pub workload: String,
    /// The version to hold the current one against: a git tag or commit for
    /// rustpipe, a package version for a pip or Maven product (installed
    /// beside the current one). The current version itself is an A/A check:
    /// the noise of this host.
    #[arg(long)]
    pub baseline: String,
    /// The version under check, in the same terms (default: the product's
    /// own version, or rustpipe's working tree).
    #[arg(long)]
    pub current: Option<String>,
    /// Rounds, each one run of the baseline and one of the current version,
    /// in rotated order.
    #[arg(long, default_value_t = DEFAULT_ROUNDS)]
    pub repeat: u32,
    /// A figure worse by more than this many percent at the median, its
    /// interval on the worse side and its sign-test p <= 0.05, is a regression.
    #[arg(long, default_value_t = 5.0)]
    pub threshold: f64,
    /// Print the paired table and the verdict as JSON on standard output
    /// (the human table is left out; progress stays on standard error).
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub options: RunOptions,
}

#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The baseline line, or `LINE@KEY=VALUE` for a line run with settings
    /// of its own.
    pub a: LineSpec,
    /// The line compared with it: ratios are B / A.
    pub b: LineSpec,
    /// A workload from workloads/.
    #[arg(long)]
    pub workload: String,
    /// The bench point's rate (default: bench.yaml's run.rate, or its iso_rate).
    #[arg(long)]
    pub rate: Option<u64>,
    /// The bench point's window in seconds (default: bench.yaml's run.window_s).
    #[arg(long)]
    pub window: Option<u64>,
    /// The bench point's profile: `uniform` or `expert`.
    #[arg(long, value_enum, default_value_t = Profile::Uniform)]
    pub profile: Profile,
    /// The bench point's deployment (default: bench.yaml's run.deploy); a
    /// side's own `@run.deploy=` wins over it.
    #[arg(long, value_name = "NAME")]
    pub deploy: Option<String>,
    /// A bench.yaml setting the batch was run with (`--set` of `suite
    /// batch`, repeatable), such as `isolation=auto`: the point to compare at.
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub settings: Vec<Setting>,
    /// Folder of results JSONL (default: bench.yaml's results_dir).
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// Print the paired table as one JSON document on standard output.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// Print the lines and workloads as one JSON document.
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args)]
pub struct InstallArgs {
    /// A product (quix) or one of its lines (quix-eos).
    pub product: String,
    /// The version to install (default: product.yaml's); for a cargo product, a git revision.
    #[arg(long, value_name = "VERSION")]
    pub product_version: Option<String>,
}

#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Folder of results JSONL (default: bench.yaml's results_dir).
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// Folder for the pages (default: html/ inside the results folder).
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Fail on a results line that is not a run record, instead of skipping it with a warning.
    #[arg(long)]
    pub strict: bool,
}

#[derive(Debug, Args)]
pub struct ExportArgs {
    /// A run id (with `--format hgrm`) or a workload (the other formats).
    pub target: String,
    /// What to write.
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// Folder of results JSONL (default: bench.yaml's results_dir).
    #[arg(long)]
    pub results: Option<PathBuf>,
    /// Write here instead of standard output.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// What `suite export` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExportFormat {
    /// A run's latency histogram as HdrHistogram percentile-distribution text (ms).
    Hgrm,
    /// A workload's figures as tidy CSV: one row per run and figure, raw numbers.
    Csv,
    /// The same rows as JSON Lines.
    Jsonl,
    /// The tables of the workload's page, as Markdown.
    Markdown,
}

#[derive(Debug, Subcommand)]
pub enum RigCommand {
    /// Replay gendata's Avro batch datums through every decoder and insert
    /// format in process (no broker, no server), interleaved, and append one
    /// record per arm to cpu-rig.jsonl.
    Cpu(CpuRigArgs),
}

#[derive(Debug, Args)]
pub struct CpuRigArgs {
    /// Events per batch datum.
    #[arg(long, default_value_t = 50, value_parser = clap::value_parser!(u32).range(1..))]
    pub events: u32,
    /// Repetitions of every arm, interleaved.
    #[arg(long, default_value_t = 9, value_parser = clap::value_parser!(u64).range(1..))]
    pub repetitions: u64,
    /// Datums each timed pass replays.
    #[arg(long, default_value_t = 10_000)]
    pub timed: usize,
    /// Datums through the stage before each timed pass.
    #[arg(long, default_value_t = 1_000)]
    pub warmup: usize,
    /// Datums of the untimed pass that counts allocations.
    #[arg(long, default_value_t = 500)]
    pub counted: usize,
    /// Distinct datums in the replayed ring.
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(1..))]
    pub distinct: u64,
    /// Rows per insert block in the pipeline stage.
    #[arg(long, default_value_t = 8192, value_parser = clap::value_parser!(u64).range(1..))]
    pub block_rows: u64,
    /// Shard threads finished blocks are handed to.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..))]
    pub shards: u64,
    /// Folder for results JSONL (default: bench.yaml's results_dir).
    #[arg(long)]
    pub results: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum BrokerAction {
    /// Resolve, format and start the local broker; it keeps running.
    Start,
    /// Stop the local broker.
    Stop,
    /// Say whether the local broker runs and where.
    Status,
}

#[derive(Debug, Subcommand)]
pub enum ClickHouseAction {
    /// Install if needed and start the local ClickHouse; it keeps running.
    Start,
    /// Stop the local ClickHouse.
    Stop,
    /// Say whether the local ClickHouse runs and where.
    Status,
}

#[derive(Debug, Args)]
pub struct GendataArgs {
    #[arg(long)]
    pub bootstrap: String,
    #[arg(long)]
    pub topic: String,
    /// Records per second; 0 = as fast as possible.
    #[arg(long)]
    pub rate: u64,
    #[arg(long)]
    pub seed: u64,
    /// When the schedule starts, epoch microseconds (default: now).
    #[arg(long)]
    pub start_us: Option<i64>,
    /// Where the measurement window starts, epoch microseconds (default: start).
    #[arg(long, conflicts_with = "window_file")]
    pub window_start_us: Option<i64>,
    /// When to stop, epoch microseconds; with --window-file, a bound never
    /// run past.
    #[arg(long)]
    pub end_us: i64,
    /// Learn the window at run time: poll this file until it appears, then
    /// read its JSON `{"start_us": ..., "end_us": ...}` (epoch µs) and stop
    /// at its end. Until then no record is in the window.
    #[arg(long)]
    pub window_file: Option<PathBuf>,
    /// Stop after this many records as well (sequence numbers 0..N).
    #[arg(long)]
    pub max_records: Option<u64>,
    /// Write Avro batch datums of this many events per record
    /// (workloads/avro/event-batch.avsc) instead of one JSON event.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub avro_events: Option<u32>,
    /// Write the summary here as JSON (default: standard output).
    #[arg(long)]
    pub summary: Option<PathBuf>,
    /// The input topic's partitions: on more than one, each JSON event is
    /// keyed by region/service and written to that key's partition.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub partitions: u32,
}

#[derive(Debug, Args)]
pub struct ProbeArgs {
    #[arg(long)]
    pub bootstrap: String,
    /// The output topic of the product under test.
    #[arg(long)]
    pub topic: String,
    /// The probe's own topic for the setup floor: one small record every 10 ms.
    #[arg(long)]
    pub floor_topic: String,
    /// Arrivals from here on are measured, epoch microseconds.
    #[arg(
        long,
        required_unless_present = "window_file",
        conflicts_with = "window_file"
    )]
    pub window_start_us: Option<i64>,
    /// Arrivals from here on are not; the probe then exits.
    #[arg(
        long,
        required_unless_present = "window_file",
        conflicts_with = "window_file"
    )]
    pub window_end_us: Option<i64>,
    /// Learn the window at run time: poll this file until it appears, then
    /// read its JSON `{"start_us": ..., "end_us": ...}` (epoch µs). Until
    /// then no arrival is measured.
    #[arg(long)]
    pub window_file: Option<PathBuf>,
    /// Besides the window's histogram, one per interval of this many
    /// milliseconds from the window's start (the last may be shorter).
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    pub interval_ms: u64,
    /// The field of an output record holding when it was due, epoch
    /// microseconds (the workload's: `ts_us`, a pane's `window_end_us`).
    #[arg(long, default_value = "ts_us")]
    pub stamp_field: String,
    /// Write the summary here as JSON (default: standard output).
    #[arg(long)]
    pub summary: Option<PathBuf>,
}
