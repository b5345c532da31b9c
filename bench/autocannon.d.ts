// Minimal typings for the parts of autocannon 9 the benchmark uses (the package ships none).
declare module 'autocannon' {
  type Histogram = { average: number; mean: number; stddev: number; min: number; max: number; p50: number; p99: number; total: number }
  export type Options = {
    url: string
    method?: string
    headers?: Record<string, string>
    body?: string
    connections?: number
    pipelining?: number
    duration?: number
    amount?: number
    timeout?: number
    /** Called before each request is sent; what it returns is sent instead. */
    requests?: { setupRequest?: (request: RequestParams) => RequestParams }[]
  }
  export type RequestParams = { method?: string; path?: string; headers?: Record<string, string>; body?: string }
  export type Result = {
    requests: Histogram
    latency: Histogram
    throughput: Histogram
    errors: number
    timeouts: number
    non2xx: number
    '1xx': number
    '2xx': number
    '3xx': number
    '4xx': number
    '5xx': number
    duration: number
    start: Date
    finish: Date
  }
  function autocannon(options: Options): Promise<Result>
  export default autocannon
}
