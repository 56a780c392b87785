/// The control API's OpenAPI document (openapi.yaml beside this file): the source the generator
/// makes this module's types, server protocol (`APIProtocol`) and client (`Client`) from at build
/// time, embedded so the server can serve it (`GET /openapi.yaml`). docs/control.md.
package enum OpenAPISpec {
    /// openapi.yaml's bytes.
    package static var yaml: [UInt8] { PackageResources.openapi_yaml }
}
