export { bridgeWireName, findCatalogueToken, knownBridgeNames, NO_BRIDGE } from './catalogueNames.ts'
export { completeTrackedSwap } from './completeTrackedSwap.ts'
export {
  type CorridorAnswerParameters,
  corridorAnswer,
  HIGH_RELIABILITY_PERCENT,
  MEDIUM_RELIABILITY_PERCENT,
  MIN_BRIDGE_SAMPLE_SIZE,
  MIN_SAMPLE_SIZE,
  type ReliabilityBand,
  reliabilityBand,
} from './corridorAnswer.ts'
export { type ImportObservationsReturnType, ObservationImportError, importObservations } from './importObservations.ts'
export { type ObservationFromLineReturnType, observationFromLine } from './observationFromLine.ts'
export { type CorridorPair, PAIR_CODES, type PairSide, type ParsePairCodeReturnType, parsePairCode } from './parsePairCode.ts'
export { type PriorFigures, type PublishedPriorsReturnType, publishedPriors } from './publishedPriors.ts'
export { formatUsd, type SizeBand, sizeBand } from './sizeBand.ts'
export { swapObservation } from './swapObservation.ts'
export { parseUsagePeriod, type UsagePeriod, usagePeriod } from './usagePeriod.ts'
export { INTEL_KEY_SUBJECT_PREFIX, intelIpSubject, intelKeySubject } from './usageSubjects.ts'
