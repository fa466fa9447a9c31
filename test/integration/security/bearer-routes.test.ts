import { BEARER_ROUTES } from '../../helpers/bearer-routes';
import { describeBearerSecurity } from '../../helpers/security-suite';

describeBearerSecurity(BEARER_ROUTES);
