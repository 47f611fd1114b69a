// A jest reporter for CI logs: one line as each test file starts, with the time since the run began
// and the machine's load. When CI stops a run at its time limit, the log's tail then names the file
// that was running, since when, and whether the machine was busy. Turned on by ROUTER_TEST_TIMELINE=1
// (.ci/run sets it); jest's own reporter still prints each file's result.
const os = require("node:os");
const path = require("node:path");

class TestTimelineReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.started = 0;
  }

  onRunStart(results) {
    this.startedAt = Date.now();
    this.total = results.numTotalTestSuites;
  }

  onTestFileStart(test) {
    this.started += 1;
    const seconds = Math.round((Date.now() - this.startedAt) / 1000);
    const clock = `${Math.floor(seconds / 60)}:${String(seconds % 60).padStart(2, "0")}`;
    const load = os.loadavg().map((l) => l.toFixed(2)).join(" ");
    const file = path.relative(this.rootDir, test.path);
    process.stderr.write(`timeline +${clock} file ${this.started}/${this.total} load ${load}: ${file}\n`);
  }
}

module.exports = TestTimelineReporter;
