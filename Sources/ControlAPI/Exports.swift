// The control layer's own modules, re-exported so `import ControlAPI` keeps giving the metrics
// (and, below it, the journal) to the CLI and the tests.
@_exported import IPCMetrics
