import { describe, expect, it } from 'vitest'
import { withExplicitSslMode } from '../../src/store/openPostgresSql.ts'

describe('withExplicitSslMode: the URL pg is given names the SSL mode pg 8 applies', () => {
  it('spells prefer, require and verify-ca as verify-full, which is what pg 8 does with them', () => {
    for (const mode of ['prefer', 'require', 'verify-ca'])
      expect(withExplicitSslMode(`postgres://u:p%40ss@db:5432/app?sslmode=${mode}&application_name=x`)).toBe(
        'postgres://u:p%40ss@db:5432/app?sslmode=verify-full&application_name=x',
      )
  })

  it('leaves every other URL byte for byte as it was', () => {
    for (const url of [
      'postgres://u@db/app',
      'postgres://u@db/app?sslmode=disable',
      'postgres://u@db/app?sslmode=no-verify',
      'postgres://u@db/app?sslmode=verify-full',
      'postgres://u@db/app?uselibpqcompat=true&sslmode=require',
      'postgres://u@db/app?sslmode=requires',
      'postgres://u@db/app?application_name=sslmode=require',
    ])
      expect(withExplicitSslMode(url)).toBe(url)
  })
})
