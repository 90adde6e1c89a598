/// What happens when a device's relation to a fence is first established (its first
/// fix, or its first fix after the fence was added): nothing, as on iOS; or, as on
/// Android's `INITIAL_TRIGGER_ENTER` / `_EXIT`, an enter transition when it starts
/// inside or an exit transition when it starts outside.
public enum InitialTrigger: String, Sendable, Hashable, CaseIterable {
    case none
    case enter
    case exit
}
