import CFuzzer
import Foundation

// libFuzzer's driver runs `fuzzCloud` on every input (see docs/robustness.md, scripts/fuzz.sh).
var arguments = CommandLine.argc
var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
exit(LLVMFuzzerRunDriver(&arguments, &argv) { data, size in fuzzCloud(data, size) })
