// The control layer's own modules, re-exported so `import ControlAPI` keeps giving the metrics,
// the journal and the control error to the CLI and the tests.
@_exported import CallJournal
@_exported import ControlErrors
@_exported import IPCMetrics
