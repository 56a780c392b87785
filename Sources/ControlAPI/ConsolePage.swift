enum ConsolePage {
    static let html = "<html></html>"
}
