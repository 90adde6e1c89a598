import Testing

@testable import GeotifyCore

/// The schedule of `EvaluationLookahead`: over a run of fixes each fix is worked on by
/// `objects` exactly once and by `tables` exactly once from position `distance` on, each
/// stage before the fix is evaluated, `objects` at least `distance` fixes before
/// `tables` (whose reads need what `objects` brought in), and nothing outside the run.
@Suite("Evaluation lookahead")
struct EvaluationLookaheadTests {
    @Test(arguments: [0, 1, 2, 3, 5, 6, 7, 8, 13, 100])
    func eachFixIsWorkedOnOnceByEachStageInOrderBeforeItsEvaluation(count: Int) {
        let distance = EvaluationLookahead.distance
        var objectsAt = [Int?](repeating: nil, count: count)
        var tablesAt = [Int?](repeating: nil, count: count)
        for index in 0..<count {
            let ahead = EvaluationLookahead.fixes(before: index, count: count)
            for fix in ahead.objects {
                #expect((0..<count).contains(fix))
                #expect(objectsAt[fix] == nil, "fix \(fix) asked for twice by objects")
                #expect(fix >= index)
                objectsAt[fix] = index
            }
            for fix in ahead.tables {
                #expect((0..<count).contains(fix))
                #expect(tablesAt[fix] == nil, "fix \(fix) asked for twice by tables")
                #expect(fix > index)
                tablesAt[fix] = index
            }
        }
        for fix in 0..<count {
            #expect(objectsAt[fix] != nil, "fix \(fix) not asked for by objects")
            if fix >= distance {
                #expect(tablesAt[fix] == fix - distance)
                if let objects = objectsAt[fix], let tables = tablesAt[fix] {
                    #expect(tables - objects >= distance || objects == 0, "objects for fix \(fix) at \(objects), tables at \(tables)")
                }
            } else {
                #expect(tablesAt[fix] == nil)
            }
        }
    }
}
