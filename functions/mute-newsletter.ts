import { muteHandler } from '../shared/mail/mute-handler';

export const handler = muteHandler(true);
