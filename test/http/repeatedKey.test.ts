import { describe, expect, it } from 'vitest'
import { repeatedKey } from '../../src/http/readJsonBody.ts'

const check = (text: string): string | undefined => repeatedKey(text, JSON.parse(text))

describe('repeatedKey: a key named twice in one object of a JSON body', () => {
  it.each([
    ['{"a":1,"a":2}', 'a'],
    ['{"recipients":[{"to":"x","amount":"1"},{"to":"y","amount":"2","amount":"3"}]}', 'amount'],
    ['{"a":{"b":1,"b":{"c":1}}}', 'b'],
    ['{"a":{"b":{"c":1}},"a":{"b":2}}', 'a'],
    ['{"x":"\\":","x":1}', 'x'],
    ['{"a":1,"\\u0061":2}', 'a'],
    ['{ "a" : 1 , "a" : 2 }', 'a'],
  ])('%s names %s twice', (text, key) => {
    expect(check(text)).toBe(key)
  })

  it.each([
    '{"a":1,"b":2}',
    '{"recipients":[{"to":"x","amount":"1"},{"to":"y","amount":"2"}]}',
    '{"a":{"a":{"a":1}}}',
    '{"a":"\\":\\":","b":"{\\"a\\":1,\\"a\\":2}"}',
    '{"a":["a","a",{"a":1}],"b":[]}',
    '[{"a":1},{"a":2}]',
    '"a:"',
  ])('%s names each key once', (text) => {
    expect(check(text)).toBeUndefined()
  })

  it('agrees with counting keys on random bodies with and without a repeat', () => {
    const keys = ['a', 'b', 'c', 'amount', 'to']
    let seed = 7
    const random = (n: number): number => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31
      return seed % n
    }
    const object = (depth: number): { text: string; repeats: boolean } => {
      const members: string[] = []
      const used = new Set<string>()
      let repeats = false
      for (let k = random(4); k >= 0; k--) {
        const key = keys[random(keys.length)] ?? 'a'
        if (used.has(key)) repeats = true
        used.add(key)
        const value =
          depth > 0 && random(3) === 0
            ? object(depth - 1)
            : { text: JSON.stringify(random(2) === 0 ? `${key}":` : random(9)), repeats: false }
        repeats ||= value.repeats
        members.push(`${JSON.stringify(key)}:${value.text}`)
      }
      return { text: `{${members.join(',')}}`, repeats }
    }
    for (let round = 0; round < 500; round++) {
      const { text, repeats } = object(3)
      expect(check(text) !== undefined, text).toBe(repeats)
    }
  })
})
