import type { Services } from '../services';

export const KEYS_USAGE = `keys rotate   make a new signing key active; the old public key stays in the JWK Set until its tokens expire
keys rewrap   re-encrypt every stored secret under MASTER_KEY (after a rotation: MASTER_KEY_PREVIOUS holds the old key);
              once it has run, MASTER_KEY_PREVIOUS can be removed (refresh tokens from before the
              rotation are accepted only while it is set: keep it SESSION_MAX_TTL if sessions should survive)`;

export async function runKeysCommand(services: Pick<Services, 'db' | 'signingKeys' | 'apiKeys' | 'webhooks'>, [action]: string[]): Promise<string> {
  if (action === 'rotate') {
    const kid = await services.signingKeys.rotate();
    return `New signing key ${kid} is active; running instances pick it up within 30 seconds`;
  }
  if (action === 'rewrap') {
    // One transaction: a secret that opens under neither key rolls every change back.
    const { signingKeys, appkeys, webhookSecrets } = await services.db.withTransaction(async (tx) => ({
      signingKeys: await services.signingKeys.resealPrivateKeys(tx),
      appkeys: await services.apiKeys.resealAppkeys(tx),
      webhookSecrets: await services.webhooks.resealSecrets(tx),
    }));
    return (
      `Re-encrypted ${signingKeys + appkeys + webhookSecrets} secrets under MASTER_KEY (${signingKeys} signing keys, ${appkeys} appkeys, ${webhookSecrets} webhook secrets); ` +
      'every stored secret is now under MASTER_KEY. Refresh tokens issued before the rotation are signed with a ' +
      'key derived from the old one and work only while MASTER_KEY_PREVIOUS is set: remove it once SESSION_MAX_TTL ' +
      'has passed since the rotation, or now if those sessions may end'
    );
  }
  throw new Error(`unknown keys command "${action ?? ''}"\n\n${KEYS_USAGE}`);
}
