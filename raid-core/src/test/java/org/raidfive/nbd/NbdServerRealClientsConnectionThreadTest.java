package org.raidfive.nbd;

/** The real clients again, with requests run on the connection's thread. */
class NbdServerRealClientsConnectionThreadTest extends NbdServerRealClientsTest {
    @Override
    NbdServerConfig.Builder config() {
        return super.config().requestExecution(RequestExecution.CONNECTION_THREAD);
    }
}
