import Foundation
import Identity
import Testing

@Suite("JSONTree: Decodable over JSONSerialization's values")
struct JSONTreeTests {
    struct Sample: Decodable, Equatable {
        var text: String?
        var flag: Bool?
        var count: Int?
        var list: [String]?
        var nested: Inner?
        struct Inner: Decodable, Equatable { var name: String }
    }

    func decode(_ json: String) -> Sample? { JSONTree.decode(Sample.self, json: Array(json.utf8)) }

    @Test func readsAsTheDictionariesDid() throws {
        #expect(
            decode(#"{"text":"a","flag":true,"count":3,"list":["x","y"],"nested":{"name":"n"}}"#)
                == Sample(text: "a", flag: true, count: 3, list: ["x", "y"], nested: .init(name: "n")))
        // A repeated key counts with its last value; 0 and 1 read as booleans (NSNumber).
        #expect(decode(#"{"text":5,"text":"last"}"#)?.text == "last")
        #expect(decode(#"{"flag":0}"#)?.flag == false)
        #expect(decode(#"{"flag":1}"#)?.flag == true)
        #expect(decode(#"{"text":null,"unknown":[1,{"a":null}]}"#) == Sample())
    }

    @Test func refusesOtherTypesAndTexts() {
        #expect(decode(#"{"flag":2}"#) == nil)
        #expect(decode(#"{"text":5}"#) == nil)
        #expect(decode(#"{"list":["x",1]}"#) == nil)
        #expect(decode(#"{"nested":{}}"#) == nil)
        #expect(decode(#"[]"#) == nil)
        #expect(decode(#"{"count":1e999}"#) == nil)
        #expect(decode(#"{"#) == nil)
    }

    @Test func jsonValueKeepsWhatWasParsed() throws {
        struct Holder: Decodable { var any: JSONValue }
        let holder = try #require(JSONTree.decode(Holder.self, json: Array(#"{"any":{"b":[1,"x",null],"a":1.5}}"#.utf8)))
        #expect(JWT.serialize(holder.any.value) == #"{"a":1.5,"b":[1,"x",null]}"#)
        #expect(holder.any.object?["a"] as? Double == 1.5)
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(Holder.self, from: Data(#"{"any":1}"#.utf8)) }
    }
}
