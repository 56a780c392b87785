import Foundation
import Testing
@testable import DeviceProfile
