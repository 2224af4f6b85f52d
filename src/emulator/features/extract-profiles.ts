/**
 * What a server's `extractChanges` can do, by the product release it emulates (the catalogue's
 * `extractChanges`): `enterprise-11` answers everything the emulator implements, `enterprise-10.6.1` object ids
 * only (and no `serverGens`), as 10.6.1 services published from Pro 2.2 do; the ArcGIS Online organization uses
 * `online`, whose deletes are GlobalIDs.
 */
export type ExtractChangesProfile = 'enterprise-11' | 'enterprise-10.6.1' | 'online';

export const extractChangesProfiles: readonly ExtractChangesProfile[] = ['enterprise-11', 'enterprise-10.6.1', 'online'];

/** A service resource's `extractChangesCapabilities`. */
export interface ExtractChangesCapabilities {
  supportsReturnIdsOnly: boolean;
  supportsReturnExtentOnly: boolean;
  supportsReturnAttachments: boolean;
  supportsLayerQueries: boolean;
  supportsGeometry: boolean;
  supportsFeatureReturn: boolean;
  supportsReturnHasGeometryUpdates: boolean;
  supportsFieldsToCompare: boolean;
  supportsServerGens: boolean;
}

const everything: ExtractChangesCapabilities = {
  supportsReturnIdsOnly: true,
  supportsReturnExtentOnly: true,
  supportsReturnAttachments: true,
  supportsLayerQueries: true,
  supportsGeometry: true,
  supportsFeatureReturn: true,
  supportsReturnHasGeometryUpdates: false,
  supportsFieldsToCompare: false,
  supportsServerGens: true,
};

const capabilities: Readonly<Record<ExtractChangesProfile, ExtractChangesCapabilities>> = {
  'enterprise-11': everything,
  'enterprise-10.6.1': {
    ...everything,
    supportsReturnExtentOnly: false,
    supportsReturnAttachments: false,
    supportsLayerQueries: false,
    supportsGeometry: false,
    supportsFeatureReturn: false,
    supportsServerGens: false,
  },
  online: everything,
};

export const capabilitiesOf = (profile: ExtractChangesProfile): ExtractChangesCapabilities => ({ ...capabilities[profile] });
